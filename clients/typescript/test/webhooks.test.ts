/** Webhook verification for Node receivers: a delivery signed as the service signs it (Standard Webhooks). */

import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";

import { verifyWebhook } from "../src/webhooks.js";

const secret = `whsec_${Buffer.from("a secret of the endpoint, 32 bytes!").toString("base64")}`;

function signed(body: string, id = "msg_1", at = new Date()) {
  const signature = new Webhook(secret).sign(id, at, body);
  return { "webhook-id": id, "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": signature };
}

describe("verifyWebhook", () => {
  const body = JSON.stringify({ id: "evt_1", type: "project.created", data: { id: "proj_1" } });

  it("returns the event of a delivery signed with the endpoint's secret, whatever the headers' case", () => {
    const headers = Object.fromEntries(Object.entries(signed(body)).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhook(secret, body, headers)).toMatchObject({ type: "project.created", data: { id: "proj_1" } });
  });

  it("refuses a changed body, another secret, an old timestamp and a missing header", () => {
    const headers = signed(body);
    expect(() => verifyWebhook(secret, body.replace("proj_1", "proj_2"), headers)).toThrow();
    expect(() => verifyWebhook(`whsec_${Buffer.from("another secret entirely, 32 b!!").toString("base64")}`, body, headers))
      .toThrow();
    expect(() => verifyWebhook(secret, body, signed(body, "msg_1", new Date(Date.now() - 10 * 60_000)))).toThrow();
    expect(() => verifyWebhook(secret, body, { ...headers, "webhook-signature": undefined })).toThrow();
  });
});

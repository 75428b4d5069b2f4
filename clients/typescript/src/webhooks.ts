/**
 * Verify a webhook delivery in a Node receiver (Standard Webhooks: webhook-id, webhook-timestamp,
 * webhook-signature over the raw body). Its own entry point (`@svc/client/webhooks`): a browser
 * bundle of the client never carries it.
 */

import { Webhook } from "standardwebhooks";

/** The event a delivery carries, once its signature and timestamp are checked. */
export interface WebhookEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
  [field: string]: unknown;
}

/**
 * The delivery's event, or an error when the signature does not match the secret (`whsec_...`), the
 * timestamp is more than 5 minutes away, or a header is missing. `body`: the raw body, unparsed.
 */
export function verifyWebhook(secret: string, body: string, headers: Record<string, string | string[] | undefined>):
  WebhookEvent {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(",") : value;
  }
  return new Webhook(secret).verify(body, flat) as WebhookEvent;
}

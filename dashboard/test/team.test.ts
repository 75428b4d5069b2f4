import { describe, expect, it } from "vitest";

import { grantableRoles, invitationActions, loginOutcome, memberActions, type Viewer } from "../src/team";

const OWNER: Viewer = { userId: "usr_owner", role: "owner", scopes: ["members:read", "members:write", "billing:write"] };
const ADMIN: Viewer = { userId: "usr_admin", role: "admin", scopes: ["members:read", "members:write"] };
const MEMBER: Viewer = { userId: "usr_member", role: "member", scopes: ["members:read"] };

describe("grantableRoles", () => {
  it("lets owners make owners, admins admins and members, and members nobody", () => {
    expect(grantableRoles(OWNER)).toEqual(["owner", "admin", "member"]);
    expect(grantableRoles(ADMIN)).toEqual(["admin", "member"]);
    expect(grantableRoles(MEMBER)).toEqual([]);
  });
});

describe("memberActions", () => {
  it("offers leaving only on the viewer's own row", () => {
    expect(memberActions(OWNER, { userId: "usr_owner", role: "owner" }))
      .toEqual({ roles: [], remove: false, leave: true, transfer: false });
    expect(memberActions(MEMBER, { userId: "usr_member", role: "member" }).leave).toBe(true);
  });
  it("lets an owner change, remove and hand the ownership to another member", () => {
    expect(memberActions(OWNER, { userId: "usr_x", role: "member" }))
      .toEqual({ roles: ["owner", "admin", "member"], remove: true, leave: false, transfer: true });
    // to an owner already, a transfer would only demote the caller: not offered
    expect(memberActions(OWNER, { userId: "usr_y", role: "owner" }).transfer).toBe(false);
    expect(memberActions(OWNER, { userId: "usr_y", role: "owner" }).remove).toBe(true);
  });
  it("keeps an admin's hands off owners and off the ownership", () => {
    expect(memberActions(ADMIN, { userId: "usr_y", role: "owner" }))
      .toEqual({ roles: [], remove: false, leave: false, transfer: false });
    expect(memberActions(ADMIN, { userId: "usr_x", role: "member" }))
      .toEqual({ roles: ["admin", "member"], remove: true, leave: false, transfer: false });
  });
  it("gives a member nothing to do to others", () => {
    expect(memberActions(MEMBER, { userId: "usr_x", role: "member" }))
      .toEqual({ roles: [], remove: false, leave: false, transfer: false });
  });
});

describe("invitationActions", () => {
  it("resends pending and expired invitations, revokes pending ones, and only for who may invite", () => {
    expect(invitationActions("pending", true)).toEqual({ resend: true, revoke: true });
    expect(invitationActions("expired", true)).toEqual({ resend: true, revoke: false });
    expect(invitationActions("accepted", true)).toEqual({ resend: false, revoke: false });
    expect(invitationActions("revoked", true)).toEqual({ resend: false, revoke: false });
    expect(invitationActions("pending", false)).toEqual({ resend: false, revoke: false });
  });
});

describe("loginOutcome", () => {
  it("says nothing while pending and tells a denial from a timeout", () => {
    expect(loginOutcome("pending")).toBeNull();
    expect(loginOutcome("approved")).toMatch(/^Approved/);
    expect(loginOutcome("consumed")).toMatch(/signed in/);
    expect(loginOutcome("expired", "denied")).toMatch(/^Denied/);
    expect(loginOutcome("expired", "timed_out")).toMatch(/expired/);
  });
});

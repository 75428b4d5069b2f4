/**
 * The members' names by user id, read once per page load and tenant (the members list, every page
 * of it), so a page names the people its rows mention. A list the caller may not read names no one:
 * the ids are shown shortened instead. The Members page forgets them after a change.
 */
import type { Client } from "@svc/client";
import { useEffect, useState } from "preact/hooks";

import { useSigned } from "./api";
import { collect } from "./load";

const read = new Map<string, Promise<ReadonlyMap<string, string>>>();

/** The tenant's members as user id → name (the name, else the e-mail); empty when not readable. */
export function namesOf(client: Client, tenantId: string): Promise<ReadonlyMap<string, string>> {
  let names = read.get(tenantId);
  if (!names) {
    names = collect(client.members.iterate(), 1000).then(
      (members) => new Map(members.flatMap((m) => {
        const name = m.name?.trim() || m.email;
        return name ? [[m.userId, name] as [string, string]] : [];
      })),
      () => new Map<string, string>());
    read.set(tenantId, names);
  }
  return names;
}

/** Forget the names read (the members changed). */
export function forgetNames(): void {
  read.clear();
}

const NONE: ReadonlyMap<string, string> = new Map();

/** The names of the signed-in tenant's members; none until read. */
export function useNames(): ReadonlyMap<string, string> {
  const { client, me } = useSigned();
  const [names, setNames] = useState<ReadonlyMap<string, string>>(NONE);
  useEffect(() => {
    let current = true;
    void namesOf(client, me.tenant.id).then((found) => { if (current) setNames(found); });
    return () => { current = false; };
  }, [client, me.tenant.id]);
  return names;
}

/**
 * What the logs know of the tenant's objects now (sentences.ts's Known): the members by name, and the
 * projects, agents, webhook endpoints, API keys and invitations that exist, each read once per page
 * with every page of its list. A list the caller's scopes cannot read is not asked for, and one
 * that fails is left out: its objects count as unknown, so their entries still link.
 */
import type { Client } from "@svc/client";
import { useEffect, useState } from "preact/hooks";

import { useSigned } from "./api";
import { collect } from "./load";
import { useNames } from "./people";
import type { Known } from "./sentences";

export type Kind = "proj" | "agt" | "whk" | "key" | "inv";

/** At most this many of a kind are read; a longer list is not known whole (its missing ids are unknown, not deleted). */
const AT_MOST = 1000;

/** Each kind's list: the scope that reads it, and each object's id and name. */
const LISTS: Record<Kind, { scope: string; read: (client: Client) => Promise<[string, string][]> }> = {
  proj: { scope: "projects:read", read: async (c) => (await collect(c.projects.iterate(), AT_MOST)).map((p) => [p.id, p.name]) },
  agt: { scope: "agents:read", read: async (c) => (await collect(c.agents.iterate(), AT_MOST)).map((a) => [a.id, a.name]) },
  whk: { scope: "webhooks:read", read: async (c) => (await collect(c.webhooks.iterate(), AT_MOST)).map((w) => [w.id, w.url]) },
  key: { scope: "keys:read", read: async (c) => (await collect(c.apiKeys.iterate(), AT_MOST)).map((k) => [k.id, k.name]) },
  inv: { scope: "members:read", read: async (c) => (await collect(c.invitations.iterate(), AT_MOST)).map((i) => [i.id, i.email]) },
};

/** What the page knows: the members' names at once, the objects of `kinds` once read. */
export function useKnown(kinds: Kind[]): Known {
  const { client, me } = useSigned();
  const people = useNames();
  const [read, setRead] = useState<{ objects: Map<string, string>; kinds: Set<string> }>(
    () => ({ objects: new Map(), kinds: new Set() }));
  const wanted = kinds.join(",");
  useEffect(() => {
    let current = true;
    const readable = kinds.filter((kind) => me.scopes.includes(LISTS[kind].scope));
    void Promise.all(readable.map((kind) => LISTS[kind].read(client).then((items) => ({ kind, items }), () => null)))
      .then((lists) => {
        if (!current) return;
        const objects = new Map<string, string>();
        const done = new Set<string>();
        for (const list of lists) {
          if (!list) continue;
          if (list.items.length < AT_MOST) done.add(list.kind);
          for (const [id, name] of list.items) objects.set(id, name);
        }
        setRead({ objects, kinds: done });
      });
    return () => { current = false; };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [client, me.tenant.id, wanted]);
  return { people, objects: read.objects, kinds: read.kinds };
}

import { renderHook, waitFor, act } from "@testing-library/preact";
import { describe, expect, it } from "vitest";

import { usePaged } from "../src/paged";

/** A list of `total` numbers served in pages of `size` (the cursor is the next index). */
function server(total: number, size: number) {
  const asked: (string | null)[] = [];
  return {
    asked,
    read: async (cursor: string | null) => {
      asked.push(cursor);
      const start = cursor ? Number(cursor) : 0;
      const items = Array.from({ length: Math.min(size, total - start) }, (_, i) => start + i);
      return { items, nextCursor: start + size < total ? String(start + size) : null };
    },
  };
}

describe("a list read a page at a time", () => {
  it("appends each next page until the cursor ends, then offers no more", async () => {
    const list = server(5, 2);
    const { result } = renderHook(() => usePaged(list.read));
    await waitFor(() => expect(result.current.items).toEqual([0, 1]));
    expect(result.current.hasMore).toBe(true);
    act(() => result.current.more());
    await waitFor(() => expect(result.current.items).toEqual([0, 1, 2, 3]));
    act(() => result.current.more());
    await waitFor(() => expect(result.current.items).toEqual([0, 1, 2, 3, 4]));
    expect(result.current.hasMore).toBe(false);
    expect(list.asked).toEqual([null, "2", "4"]);
  });

  it("starts again from the first page on reload, dropping the pages read before", async () => {
    const list = server(5, 2);
    const { result } = renderHook(() => usePaged(list.read));
    await waitFor(() => expect(result.current.hasMore).toBe(true));
    act(() => result.current.more());
    await waitFor(() => expect(result.current.items).toHaveLength(4));
    act(() => result.current.reload());
    await waitFor(() => expect(list.asked).toEqual([null, "2", null]));
    await waitFor(() => expect(result.current.items).toEqual([0, 1]));
    expect(result.current.hasMore).toBe(true);
  });

  it("keeps a failed next page's error to show, and the pages it had", async () => {
    let fail = false;
    const list = server(5, 2);
    const { result } = renderHook(() => usePaged((cursor) => fail ? Promise.reject(new Error("down")) : list.read(cursor)));
    await waitFor(() => expect(result.current.items).toEqual([0, 1]));
    fail = true;
    act(() => result.current.more());
    await waitFor(() => expect(result.current.moreError).toBeInstanceOf(Error));
    expect(result.current.items).toEqual([0, 1]);
    expect(result.current.hasMore).toBe(true);
  });
});

describe("a filtered list", () => {
  it("shows loading, not the rows of the filter before, until the new filter's first page comes", async () => {
    const lists: Record<string, ReturnType<typeof server>> = { a: server(3, 2), b: server(1, 2) };
    let release: () => void = () => {};
    const { result, rerender } = renderHook(({ filter }: { filter: string }) => usePaged(async (cursor) => {
      if (filter === "b") await new Promise<void>((resolve) => { release = resolve; });
      return (lists[filter] as ReturnType<typeof server>).read(cursor);
    }, [filter]), { initialProps: { filter: "a" } });
    await waitFor(() => expect(result.current.items).toEqual([0, 1]));
    rerender({ filter: "b" });
    await waitFor(() => expect(result.current.first.state).toBe("loading"));
    expect(result.current.items).toEqual([]);
    expect(result.current.hasMore).toBe(false);
    act(() => release());
    await waitFor(() => expect(result.current.first.state).toBe("ready"));
    expect(result.current.items).toEqual([0]);
    expect(result.current.hasMore).toBe(false);
  });
});

/** A real HTTP server on loopback for the client's tests: each request is recorded and answered by a handler. */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export type Handler = (request: Seen, response: ServerResponse) => void | Promise<void>;

export interface TestServer {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

export async function serve(handler: Handler): Promise<TestServer> {
  const seen: Seen[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const entry = { method: request.method ?? "", url: request.url ?? "", headers: request.headers,
                      body: Buffer.concat(chunks).toString() };
      seen.push(entry);
      void Promise.resolve(handler(entry, response)).catch((error: unknown) => {
        response.statusCode = 500;
        response.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`, seen,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** Answer in the service's envelope. */
export function json(response: ServerResponse, status: number, data: unknown, headers: Record<string, string> = {}): void {
  const body = status < 400 ? { data, meta: { request_id: "req-1", timestamp: "2026-11-27T00:00:00Z" } } : data;
  response.writeHead(status, { "content-type": "application/json", "x-request-id": "req-1", ...headers });
  response.end(JSON.stringify(body));
}

export function error(response: ServerResponse, status: number, code: string, details: object = {},
                      headers: Record<string, string> = {}): void {
  json(response, status, { error: { code, message: `${code} said`, details },
                           meta: { request_id: "req-err", timestamp: "2026-11-27T00:00:00Z" } },
       { "x-request-id": "req-err", ...headers });
}

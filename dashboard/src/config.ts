/** Where the API is, and the operator's brand: `config.json` beside the page (written by whoever serves
 * the files: the local stack, or the deployment's upload), so one build serves every deployment. */
import { type Brand, brandOf, DEFAULT_BRAND } from "./brand";

export interface DashboardConfig {
  /** The API's address, without /api/v1. */
  apiBaseUrl: string;
  brand: Brand;
}

export async function loadConfig(fetcher: typeof fetch = fetch): Promise<DashboardConfig> {
  if (import.meta.env.DEV) {   // `npm run dev` (Vite's server has no config.json): the local stack, same site
    return { apiBaseUrl: (import.meta.env["VITE_API_BASE_URL"] as string | undefined) ?? "http://localhost:3000",
             brand: DEFAULT_BRAND };
  }
  const answer = await fetcher("./config.json", { cache: "no-store" });
  if (!answer.ok) throw new Error(`config.json: ${answer.status}`);
  const config = await answer.json() as Partial<DashboardConfig>;
  if (typeof config.apiBaseUrl !== "string" || !/^https?:\/\//.test(config.apiBaseUrl)) {
    throw new Error("config.json has no apiBaseUrl");
  }
  return { apiBaseUrl: config.apiBaseUrl.replace(/\/+$/, ""), brand: brandOf(config.brand) };
}

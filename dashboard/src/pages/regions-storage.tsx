/**
 * Settings → Regions and storage: the tenant's regional preferences (primary and secondary region,
 * data residency, compliance level), the region catalogue, where its files are kept (the platform's
 * storage or a bucket of its own: S3, R2, GCS, Azure), and a live check of that bucket (write, read,
 * delete) shown as a checklist. Stored keys are never shown: only whether they are set and the access
 * key's last four characters.
 */
import { ApiError, type components } from "@svc/client";
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient, useSigned } from "../api";
import { ErrorNotice, Show } from "../components/status";
import { Time } from "../components/readable";
import { useLoad } from "../load";
import { TableWrap } from "../components/table-wrap";
import { toast } from "../toast";

type Preferences = components["schemas"]["Preferences"];
type PreferencesUpdate = components["schemas"]["PreferencesUpdate"];
type RegionList = components["schemas"]["RegionList"];
type Storage = components["schemas"]["StorageConfig"];
type Validation = components["schemas"]["StorageValidation"];
type ByosBody = components["schemas"]["S3StorageBody"] | components["schemas"]["R2StorageBody"]
  | components["schemas"]["GcsStorageBody"] | components["schemas"]["AzureStorageBody"];
type StorageBody = components["schemas"]["PlatformStorageBody"] | ByosBody;
type Provider = ByosBody["byosProvider"];

const FEATURES = ["data_residency", "secondary_region", "gdpr", "hipaa", "byos"] as const;
type Feature = (typeof FEATURES)[number];
type FeatureCheck = { enabled: boolean; requiredPlan: string };

const PROVIDERS: { value: Provider; label: string; endpoint: string; bucket: string; keys: [string, string] }[] = [
  { value: "s3", label: "Amazon S3", endpoint: "optional: https://s3.<region>.amazonaws.com", bucket: "Bucket",
    keys: ["Access key id", "Secret access key"] },
  { value: "r2", label: "Cloudflare R2", endpoint: "https://<account>.r2.cloudflarestorage.com", bucket: "Bucket",
    keys: ["R2 access key id", "R2 secret"] },
  { value: "gcs", label: "Google Cloud Storage", endpoint: "https://storage.googleapis.com", bucket: "Bucket",
    keys: ["HMAC access id", "HMAC secret"] },
  { value: "azure", label: "Azure Blob Storage", endpoint: "https://<account>.blob.core.windows.net", bucket: "Container",
    keys: ["Account name", "Account key"] },
];

/** A refusal for want of a plan, in words: "needs the growth plan (this tenant is on starter)". */
function PlanRefusal({ error }: { error: unknown }) {
  if (!(error instanceof ApiError) || error.code !== "FORBIDDEN" || !error.details["requiredPlan"]) return null;
  const d = error.details as { feature?: string; requiredPlan?: string; currentPlan?: string };
  return <p class="warning">{d.feature} needs the {d.requiredPlan} plan; this tenant is on {d.currentPlan}.{" "}
    <a href="#/settings/billing">Change plan</a></p>;
}

/** A conflict with what is stored, in words: each rule broken, and the stored values it read. */
function ConflictDetail({ error }: { error: unknown }) {
  if (!(error instanceof ApiError) || error.code !== "CONFLICT") return null;
  const fields = Array.isArray(error.details["fields"]) ? error.details["fields"] as { field?: string; reason?: string }[] : [];
  const current = (error.details["current"] ?? {}) as Record<string, unknown>;
  if (fields.length === 0 && Object.keys(current).length === 0) return null;
  return (
    <div class="warning">
      <ul>{fields.map((f, i) => <li key={i}><code>{f.field}</code>: {f.reason}</li>)}</ul>
      {Object.keys(current).length > 0 && (
        <p>Stored now: {Object.entries(current).map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(", ")}.
          Change these with it.</p>
      )}
    </div>
  );
}

function Refused({ error }: { error: unknown }) {
  return <><PlanRefusal error={error} /><ErrorNotice error={error} /><ConflictDetail error={error} /></>;
}

export function RegionsStoragePage() {
  const client = useClient();
  const { me } = useSigned();
  const tenantId = me.tenant.id;
  const loaded = useLoad(async () => {
    const [regions, preferences, storage, checks] = await Promise.all([
      client.call("list_regions"),
      client.call("get_preferences", { path: { tenantId } }),
      client.call("get_storage", { path: { tenantId } }),
      Promise.all(FEATURES.map((featureKey) => client.call("check_feature", { path: { tenantId, featureKey } }))),
    ]);
    const features = {} as Record<Feature, FeatureCheck>;
    FEATURES.forEach((feature, i) => { features[feature] = checks[i]!; });
    return { regions, preferences, storage, features };
  }, [tenantId]);
  return (
    <>
      <h1>Regions and storage</h1>
      <p class="lead">Where this tenant's data lives: its regions, data residency and compliance level, and whether
        its files are kept in the platform's storage or in a bucket of its own.</p>
      <Show loaded={loaded} what="the regions and storage">
        {({ regions, preferences, storage, features }) => (
          <>
            <PreferencesForm regions={regions} current={preferences} features={features} saved={loaded.reload} />
            <StorageForm regions={regions} current={storage} features={features} saved={loaded.reload} />
            <RegionCatalogue regions={regions} />
          </>
        )}
      </Show>
    </>
  );
}

function needs(features: Record<Feature, FeatureCheck>, feature: Feature): string | null {
  return features[feature].enabled ? null : `needs the ${features[feature].requiredPlan} plan`;
}

/** The fields of `next` that differ from `current` (a PATCH sends only what changes). */
export function changedFields(current: Preferences, next: Preferences): PreferencesUpdate {
  const keys = ["primaryRegion", "secondaryRegion", "dataResidencyRequired", "dataResidencyRegion", "complianceLevel"] as const;
  const patch: Record<string, unknown> = {};
  for (const key of keys) if (current[key] !== next[key]) patch[key] = next[key];
  return patch as PreferencesUpdate;
}

function PreferencesForm({ regions, current, features, saved }: {
  regions: RegionList; current: Preferences; features: Record<Feature, FeatureCheck>; saved: () => void }) {
  const client = useClient();
  const action = useAction();
  const [draft, setDraft] = useState<Preferences>(current);
  const set = (change: Partial<Preferences>) => setDraft({ ...draft, ...change });
  const available = regions.items.filter((r) => r.available);
  const patch = changedFields(current, draft);
  const residencyNote = needs(features, "data_residency");
  const secondaryNote = needs(features, "secondary_region");
  return (
    <section class="card" aria-labelledby="prefs-title">
      <h2 id="prefs-title">Regional preferences</h2>
      <p class="muted">{current.isDefault ? "The defaults: nothing set yet." : <>Last changed <Time iso={current.updated_at} />.</>}</p>
      <form onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          await client.call("update_preferences", { path: { tenantId: current.tenantId }, body: patch });
          toast("The preferences are saved.");
          saved();
        });
      }}>
        <div class="fields">
          <label>Primary region<select value={draft.primaryRegion} onChange={(e) => set({ primaryRegion: e.currentTarget.value })}>
            {available.map((r) => <option key={r.id} value={r.id}>{r.name} ({r.id})</option>)}</select></label>
          <label>Secondary region{secondaryNote && <span class="muted"> ({secondaryNote})</span>}
            <select value={draft.secondaryRegion ?? ""} onChange={(e) => set({ secondaryRegion: e.currentTarget.value || null })}>
              <option value="">None</option>
              {available.filter((r) => r.id !== draft.primaryRegion).map((r) => <option key={r.id} value={r.id}>{r.name} ({r.id})</option>)}
            </select></label>
          <label>Compliance level
            <input list="compliance-levels" value={draft.complianceLevel} pattern={"[a-z][a-z0-9_\\-]{0,31}"}
                   onInput={(e) => set({ complianceLevel: e.currentTarget.value })} />
            <datalist id="compliance-levels"><option value="standard" /><option value="gdpr" /><option value="hipaa" /></datalist>
          </label>
        </div>
        <label class="check"><input type="checkbox" checked={draft.dataResidencyRequired}
                                    onChange={(e) => set({ dataResidencyRequired: e.currentTarget.checked })} />
          Keep the data within one jurisdiction (data residency){residencyNote && <span class="muted"> ({residencyNote})</span>}</label>
        <div class="fields">
          <label>Residency jurisdiction<select value={draft.dataResidencyRegion ?? ""}
                                              onChange={(e) => set({ dataResidencyRegion: e.currentTarget.value || null })}>
            <option value="">None</option>
            {regions.jurisdictions.map((j) => <option key={j} value={j}>{j}</option>)}</select></label>
        </div>
        <p class="muted">gdpr {needs(features, "gdpr") ?? "is included"}; hipaa {needs(features, "hipaa") ?? "is included"}.
          Both need regions certified for them (the catalogue below).</p>
        <button type="submit" class="primary" disabled={action.busy || Object.keys(patch).length === 0}>
          {action.busy ? "Saving…" : "Save preferences"}</button>
      </form>
      {action.error !== null && <Refused error={action.error} />}
    </section>
  );
}

interface StorageDraft {
  mode: "platform" | "byos";
  platformRegion: string;
  provider: Provider;
  endpoint: string;
  bucket: string;
  region: string;
  accessKey: string;
  secretKey: string;
}

function draftOf(current: Storage): StorageDraft {
  return { mode: current.storageMode, platformRegion: current.platformRegion ?? "",
           provider: (current.byosProvider ?? "s3") as Provider, endpoint: current.byosEndpoint ?? "",
           bucket: current.byosBucket ?? "", region: current.byosRegion ?? "", accessKey: "", secretKey: "" };
}

/** The PUT (or validation) body of a draft: keys only when typed (left out: the stored ones are kept). */
export function storageBody(draft: StorageDraft): StorageBody {
  if (draft.mode === "platform") {
    return { storageMode: "platform", ...(draft.platformRegion ? { platformRegion: draft.platformRegion } : {}) } as StorageBody;
  }
  const body: Record<string, unknown> = { storageMode: "byos", byosProvider: draft.provider, byosBucket: draft.bucket.trim() };
  if (draft.endpoint.trim()) body["byosEndpoint"] = draft.endpoint.trim();
  if (draft.provider !== "azure" && draft.region.trim()) body["byosRegion"] = draft.region.trim();
  if (draft.accessKey || draft.secretKey) {
    body["byosAccessKey"] = draft.accessKey;
    body["byosSecretKey"] = draft.secretKey;
  }
  return body as StorageBody;
}

function StorageForm({ regions, current, features, saved }: {
  regions: RegionList; current: Storage; features: Record<Feature, FeatureCheck>; saved: () => void }) {
  const client = useClient();
  const action = useAction();
  const check = useAction();
  const [draft, setDraft] = useState<StorageDraft>(draftOf(current));
  const [result, setResult] = useState<Validation | null>(null);
  const set = (change: Partial<StorageDraft>) => setDraft({ ...draft, ...change });
  const provider = PROVIDERS.find((p) => p.value === draft.provider)!;
  const byosNote = needs(features, "byos");
  const sameTarget = current.storageMode === "byos" && current.byosProvider === draft.provider
    && (current.byosEndpoint ?? "") === draft.endpoint.trim() && (current.byosBucket ?? "") === draft.bucket.trim();
  const keysKept = sameTarget && current.byosAccessKeySet;
  const tenantId = current.tenantId;
  const validate = (body: ByosBody | null) => void check.run(async () => {
    setResult(null);
    setResult(await client.call("validate_storage", { path: { tenantId }, ...(body ? { body } : {}) }));
  });
  return (
    <section class="card" aria-labelledby="storage-title">
      <h2 id="storage-title">Storage</h2>
      <p class="muted">Now: {current.storageMode === "platform"
        ? `the platform's storage in ${current.platformRegion ?? "the primary region"}`
        : `${current.byosProvider} bucket ${current.byosBucket}${current.byosAccessKeyLast4 ? `, access key …${current.byosAccessKeyLast4}` : ""}`}
        {current.isDefault ? " (the default)" : <> (since <Time iso={current.updated_at} />)</>}.</p>
      <form onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          await client.call("put_storage", { path: { tenantId }, body: storageBody(draft) });
          setDraft({ ...draft, accessKey: "", secretKey: "" });
          toast("The storage configuration is saved.");
          saved();
        });
      }}>
        <fieldset>
          <legend>Where files are kept</legend>
          <label class="check"><input type="radio" name="storage-mode" checked={draft.mode === "platform"}
                                      onChange={() => set({ mode: "platform" })} />The platform's storage</label>
          <label class="check"><input type="radio" name="storage-mode" checked={draft.mode === "byos"}
                                      onChange={() => set({ mode: "byos" })} />A bucket of this tenant's own (BYOS)
            {byosNote && <span class="muted"> ({byosNote})</span>}</label>
        </fieldset>
        {draft.mode === "platform" ? (
          <div class="fields">
            <label>Platform region<select value={draft.platformRegion} onChange={(e) => set({ platformRegion: e.currentTarget.value })}>
              <option value="">The primary region</option>
              {regions.items.filter((r) => r.available).map((r) => <option key={r.id} value={r.id}>{r.name} ({r.id})</option>)}
            </select></label>
          </div>
        ) : (
          <>
            <div class="fields">
              <label>Provider<select value={draft.provider} onChange={(e) => set({ provider: e.currentTarget.value as Provider })}>
                {PROVIDERS.map((p) => <option key={p.value} value={p.value}>{p.label}</option>)}</select></label>
              <label>Endpoint<input type="url" value={draft.endpoint} placeholder={provider.endpoint}
                                    required={draft.provider !== "s3"} onInput={(e) => set({ endpoint: e.currentTarget.value })} /></label>
              <label>{provider.bucket}<input required value={draft.bucket} onInput={(e) => set({ bucket: e.currentTarget.value })} /></label>
              {draft.provider !== "azure" && (
                <label>Region{draft.provider === "s3" ? "" : " (optional)"}<input value={draft.region} required={draft.provider === "s3"}
                                                                                   placeholder={draft.provider === "s3" ? "us-east-1" : "auto"}
                                                                                   onInput={(e) => set({ region: e.currentTarget.value })} /></label>
              )}
              <label>{provider.keys[0]}<input value={draft.accessKey} autocomplete="off" spellcheck={false}
                                              required={!keysKept} placeholder={keysKept ? "stored: leave empty to keep" : ""}
                                              onInput={(e) => set({ accessKey: e.currentTarget.value })} /></label>
              <label>{provider.keys[1]}<input type="password" value={draft.secretKey} autocomplete="new-password"
                                              required={!keysKept} placeholder={keysKept ? "stored: leave empty to keep" : ""}
                                              onInput={(e) => set({ secretKey: e.currentTarget.value })} /></label>
            </div>
            <p class="muted">The keys are sealed when saved and never shown again.</p>
          </>
        )}
        <div class="row-actions">
          <button type="submit" class="primary" disabled={action.busy}>{action.busy ? "Saving…" : "Save storage"}</button>
          {draft.mode === "byos" && (
            <button type="button" disabled={check.busy} onClick={() => validate(storageBody(draft) as ByosBody)}>
              Check without saving</button>
          )}
          {current.storageMode === "byos" && (
            <button type="button" disabled={check.busy} onClick={() => validate(null)}>Check the saved bucket</button>
          )}
        </div>
      </form>
      {action.error !== null && <Refused error={action.error} />}
      {check.busy && <p class="loading" role="status">Checking the bucket…</p>}
      {check.error !== null && <Refused error={check.error} />}
      {result && <Checklist result={result} />}
    </section>
  );
}

const STEP_NAMES = { write: "Write a test object", read: "Read it back", delete: "Delete it" } as const;

function Checklist({ result }: { result: Validation }) {
  const ran = new Map(result.steps.map((s) => [s.step, s]));
  return (
    <div class={`checklist-result ${result.ok ? "passed" : "failed"}`} role="status" aria-labelledby="check-title">
      <h3 id="check-title">{result.ok ? "The bucket works" : "The bucket failed the check"}: {result.byosProvider}{" "}
        {result.byosBucket} ({result.source === "stored" ? "the saved configuration" : "not saved"}, <Time iso={result.checked_at} />)</h3>
      <ol class="checklist">
        {(["write", "read", "delete"] as const).map((name) => {
          const step = ran.get(name);
          const state = !step ? "skipped" : step.ok ? "passed" : "failed";
          return (
            <li key={name} class={state} data-step={name}>
              <span aria-hidden="true" class="mark">{state === "passed" ? "✓" : state === "failed" ? "✗" : "–"}</span>{" "}
              <strong>{STEP_NAMES[name]}</strong>: {state}
              {step && step.ok && <span class="muted"> ({step.latencyMs} ms)</span>}
              {step && !step.ok && (
                <div class="step-detail">{step.reason && <code>{step.reason}</code>}{step.message && <> {step.message}</>}
                  {step.providerCode && <span class="muted"> (the storage said {step.providerCode})</span>}</div>
              )}
            </li>
          );
        })}
      </ol>
    </div>
  );
}

function RegionCatalogue({ regions }: { regions: RegionList }) {
  return (
    <section aria-labelledby="regions-title">
      <h2 id="regions-title">Regions</h2>
      <TableWrap label={"Region catalogue"}>
        <table class="stack">
          <thead><tr><th scope="col">Region</th><th scope="col">Id</th><th scope="col">Jurisdiction</th>
            <th scope="col">Compliance levels</th><th scope="col">Available</th></tr></thead>
          <tbody>
            {regions.items.map((r) => (
              <tr key={r.id}>
                <th scope="row">{r.name}{r.id === regions.defaultRegion && <span class="muted"> (default)</span>}</th>
                <td data-label="Id"><code>{r.id}</code></td>
                <td data-label="Jurisdiction">{r.jurisdiction}</td>
                <td data-label="Compliance levels">{r.complianceLevels.join(", ")}</td>
                <td data-label="Available">{r.available ? "yes" : "no"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </section>
  );
}

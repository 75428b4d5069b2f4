/**
 * Build → Projects: the tenant's projects (name, language, last change); Create project opens a dialog
 * (name, description, language); each project's actions menu edits it in place or deletes it (asked
 * first: its files go with it).
 */
import type { Project } from "@svc/client";
import { useEffect, useRef, useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient } from "../api";
import { Confirm } from "../components/confirm";
import { DialogButton } from "../components/dialog";
import { ActionsMenu } from "../components/menu";
import { EmptyState } from "../components/empty-state";
import { ErrorNotice, Show } from "../components/status";
import { Time } from "../components/readable";
import { collect, useLoad } from "../load";
import { TableWrap } from "../components/table-wrap";
import { toast } from "../toast";

interface Fields { name: string; description: string; language: string }

function ProjectFields({ fields, set, idPrefix }: { fields: Fields; set: (f: Fields) => void; idPrefix: string }) {
  return (
    <div class="fields">
      <label for={`${idPrefix}-name`}>Name<input id={`${idPrefix}-name`} required maxLength={200} value={fields.name}
        onInput={(e) => set({ ...fields, name: e.currentTarget.value })} /></label>
      <label for={`${idPrefix}-language`}>Language<input id={`${idPrefix}-language`} maxLength={64} value={fields.language}
        placeholder="e.g. Python" onInput={(e) => set({ ...fields, language: e.currentTarget.value })} /></label>
      <label for={`${idPrefix}-description`}>Description<textarea id={`${idPrefix}-description`} maxLength={2000} rows={2}
        value={fields.description} onInput={(e) => set({ ...fields, description: e.currentTarget.value })} /></label>
    </div>
  );
}

export function ProjectsPage() {
  const client = useClient();
  const projects = useLoad(() => collect(client.projects.iterate()));
  return (
    <>
      <div class="page-head">
        <h1>Projects</h1>
        <DialogButton label="Create project" title="Create a project">
          {(close) => <CreateProject close={close} created={projects.reload} />}
        </DialogButton>
      </div>
      <Show loaded={projects} what="the projects">
        {(items) => items.length === 0 ? (
          <EmptyState title="No projects yet" tag="Projects">
            <p>A project holds the files agents and chats work on: an agent's tools read and write them.</p>
            <p>Press <strong>Create project</strong> above to make the first.</p>
          </EmptyState>
        ) : (
          <TableWrap label={"Projects"}>
            <table class="stack">
              <thead><tr><th scope="col">Name</th><th scope="col">Language</th><th scope="col">Updated</th>
                <th scope="col">Actions</th></tr></thead>
              <tbody>{items.map((p) => <ProjectRow key={p.id} project={p} changed={projects.reload} />)}</tbody>
            </table>
          </TableWrap>
        )}
      </Show>
      <p class="lead">A project is what agents and chats work on: its files are read and written by the agents' tools.</p>
    </>
  );
}

function CreateProject({ close, created }: { close: () => void; created: () => void }) {
  const client = useClient();
  const action = useAction();
  const [fields, setFields] = useState<Fields>({ name: "", description: "", language: "" });
  return (
    <>
      <form onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const project = await client.projects.create({ name: fields.name,
            ...(fields.description.trim() ? { description: fields.description } : {}),
            ...(fields.language.trim() ? { language: fields.language.trim() } : {}) });
          toast(`Project ${project.name} created.`);
          created();
          close();
        });
      }}>
        <ProjectFields fields={fields} set={setFields} idPrefix="new-project" />
        <div class="actions">
          <button type="button" onClick={close}>Cancel</button>
          <button type="submit" class="primary" disabled={action.busy}>{action.busy ? "Creating…" : "Create project"}</button>
        </div>
      </form>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </>
  );
}

function ProjectRow({ project, changed }: { project: Project; changed: () => void }) {
  const client = useClient();
  const action = useAction();
  const [editing, setEditing] = useState<Fields | null>(null);
  const [deleting, setDeleting] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const started = editing !== null;
  useEffect(() => { if (started) form.current?.querySelector("input")?.focus(); }, [started]);
  if (editing) {
    return (
      <tr>
        <td colSpan={4}>
          <form ref={form} aria-label={`Edit ${project.name}`} onSubmit={(event) => {
            event.preventDefault();
            void action.run(async () => {
              const saved = await client.projects.update(project.id, { name: editing.name,
                description: editing.description.trim() ? editing.description : null,
                language: editing.language.trim() ? editing.language.trim() : null });
              toast(`Project ${saved.name} saved.`);
              setEditing(null);
              changed();
            });
          }}>
            <ProjectFields fields={editing} set={setEditing} idPrefix={`edit-${project.id}`} />
            <div class="row-actions">
              <button type="submit" class="primary" disabled={action.busy}>Save</button>
              <button type="button" onClick={() => { setEditing(null); action.clear(); }}>Cancel</button>
            </div>
            {action.error !== null && <ErrorNotice error={action.error} />}
          </form>
        </td>
      </tr>
    );
  }
  return (
    <tr>
      <th scope="row">{project.name}{project.description && <div class="muted">{project.description}</div>}</th>
      <td data-label="Language">{project.language ?? "—"}</td>
      <td data-label="Updated"><Time iso={project.updated_at} /></td>
      <td><div class="row-actions">
        <ActionsMenu name={project.name} disabled={action.busy} items={[
          { label: "Edit", onSelect: () => setEditing({ name: project.name, description: project.description ?? "",
                                                        language: project.language ?? "" }) },
          { label: "Delete…", danger: true, onSelect: () => setDeleting(true) },
        ]} />
        <Confirm open={deleting} label="Delete" onClose={() => setDeleting(false)}
                 question={`Delete ${project.name}? Its files are deleted too; this cannot be undone.`}
                 onConfirm={() => void action.run(async () => {
                   await client.projects.delete(project.id);
                   toast(`Project ${project.name} deleted.`);
                   changed();
                 })} />
        {action.error !== null && <ErrorNotice error={action.error} />}
      </div></td>
    </tr>
  );
}

/**
 * Build → Projects: the tenant's projects (name, language, last change); create one (name,
 * description, language), edit one in place, delete one (asked first: its files go with it).
 */
import type { Project } from "@svc/client";
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient } from "../api";
import { ConfirmButton } from "../components/confirm";
import { Empty, ErrorNotice, Show } from "../components/status";
import { when } from "../format";
import { collect, useLoad } from "../load";
import { TableWrap } from "../components/table-wrap";

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
      <h1>Projects</h1>
      <p class="lead">A project is what agents and chats work on: its files are read and written by the agents' tools.</p>
      <CreateProject created={projects.reload} />
      <h2>Your projects</h2>
      <Show loaded={projects} what="the projects">
        {(items) => items.length === 0 ? <Empty>No projects yet: create one above.</Empty> : (
          <TableWrap label={"Projects"}>
            <table class="stack">
              <thead><tr><th scope="col">Name</th><th scope="col">Language</th><th scope="col">Updated</th>
                <th scope="col">Actions</th></tr></thead>
              <tbody>{items.map((p) => <ProjectRow key={p.id} project={p} changed={projects.reload} />)}</tbody>
            </table>
          </TableWrap>
        )}
      </Show>
    </>
  );
}

function CreateProject({ created }: { created: () => void }) {
  const client = useClient();
  const action = useAction();
  const [fields, setFields] = useState<Fields>({ name: "", description: "", language: "" });
  return (
    <section class="card" aria-labelledby="create-project-title">
      <h2 id="create-project-title">Create a project</h2>
      <form onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          await client.projects.create({ name: fields.name, ...(fields.description.trim() ? { description: fields.description } : {}),
                                         ...(fields.language.trim() ? { language: fields.language.trim() } : {}) });
          setFields({ name: "", description: "", language: "" });
          created();
        });
      }}>
        <ProjectFields fields={fields} set={setFields} idPrefix="new-project" />
        <button type="submit" class="primary" disabled={action.busy}>{action.busy ? "Creating…" : "Create project"}</button>
      </form>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </section>
  );
}

function ProjectRow({ project, changed }: { project: Project; changed: () => void }) {
  const client = useClient();
  const action = useAction();
  const [editing, setEditing] = useState<Fields | null>(null);
  if (editing) {
    return (
      <tr>
        <td colSpan={4}>
          <form aria-label={`Edit ${project.name}`} onSubmit={(event) => {
            event.preventDefault();
            void action.run(async () => {
              await client.projects.update(project.id, { name: editing.name,
                description: editing.description.trim() ? editing.description : null,
                language: editing.language.trim() ? editing.language.trim() : null });
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
      <td data-label="Updated">{when(project.updated_at)}</td>
      <td><div class="row-actions">
        <button type="button" aria-label={`Edit ${project.name}`}
                onClick={() => setEditing({ name: project.name, description: project.description ?? "",
                                            language: project.language ?? "" })}>Edit</button>
        <ConfirmButton label="Delete" disabled={action.busy}
                       question={`Delete ${project.name}? Its files are deleted too; this cannot be undone.`}
                       onConfirm={() => void action.run(async () => { await client.projects.delete(project.id); changed(); })} />
        {action.error !== null && <ErrorNotice error={action.error} />}
      </div></td>
    </tr>
  );
}

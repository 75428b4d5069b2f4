/** The first page after sign-in: who and where the caller is, and the way to each part. */
import { useSigned } from "../api";
import { ROUTES } from "../routes";

export function Home() {
  const { me } = useSigned();
  return (
    <>
      <h1>Overview</h1>
      <p>Signed in as <strong>{me.user?.email}</strong> to <strong>{me.tenant.name}</strong>
        {" "}({me.tenant.role}, {me.tenant.plan} plan).</p>
      <ul class="tiles">
        {ROUTES.filter((r) => r.section).map((r) => <li key={r.path}><a href={`#${r.path}`}>{r.title}</a></li>)}
      </ul>
    </>
  );
}

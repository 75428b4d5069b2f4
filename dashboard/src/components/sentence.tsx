/** An entry of a log in plain words (sentences.ts), linked to its object's page when it has one. */
import type { Said } from "../sentences";

export function Sentence({ said }: { said: Said }) {
  return said.href ? <a href={said.href}>{said.text}</a> : <>{said.text}</>;
}

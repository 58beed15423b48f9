/**
 * Counts printed for people ("12,345 chars"), as `n.toLocaleString("en-US")` writes them, without
 * ICU: a process's first toLocaleString loads ICU's number formatting, a start-up cost for a CLI
 * run that only prints a summary. Integers only; anything else is left to ICU.
 */
export function digitGroups(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString("en-US");
  const digits = String(Math.abs(n));
  let grouped = digits.slice(0, digits.length % 3 || 3);
  for (let at = grouped.length; at < digits.length; at += 3) grouped += `,${digits.slice(at, at + 3)}`;
  return n < 0 ? `-${grouped}` : grouped;
}

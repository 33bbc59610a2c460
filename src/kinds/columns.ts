/**
 * Table columns per kind, as kubectl shows them (the reference's server-side printers). A kind
 * without an entry gets the default table: Name and Created At.
 */
import type { Column } from '../registry/kind';

const COLUMNS: Record<string, Column[]> = {};

export function columnsFor(kind: string): Column[] {
  return COLUMNS[kind] ?? [];
}

/** Tables of core/v1 kinds beyond those in columns.ts (the reference's printers). */
import type { Obj } from '../api/meta';
import type { Column } from '../codec/table';
import { col } from './columns';

type Condition = { type?: string; status?: string; message?: string; error?: string };

/** printComponentStatus: the Healthy condition as Status, with its message and error. */
function componentHealth(x: Obj): { status: string; message: string; error: string } {
  const c = ((x as { conditions?: Condition[] }).conditions ?? []).find((c) => c.type === 'Healthy');
  if (!c) return { status: 'Unknown', message: '', error: '' };
  return { status: c.status === 'True' ? 'Healthy' : 'Unhealthy', message: c.message ?? '', error: c.error ?? '' };
}

export const COMPONENT_STATUS_COLUMNS: Column[] = [
  col('Status', 'string', 'Status of the component conditions', (x) => componentHealth(x).status),
  col('Message', 'string', 'Message of the component conditions', (x) => componentHealth(x).message),
  col('Error', 'string', 'Error of the component conditions', (x) => componentHealth(x).error),
];

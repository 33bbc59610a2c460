/** Table column builders for the kinds whose columns sit in their spec file. */
import type { Obj } from '../../api/meta';
import { age, type Column } from '../../codec/table';

const AGE_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

export function col(name: string, type: Column['type'], description: string, cell: (o: Obj, now: number) => unknown, priority = 0): Column {
  return { name, type, description, priority, cell };
}

export const AGE: Column = col('Age', 'string', AGE_DESCRIPTION, (x, now) => age(x.metadata.creationTimestamp, now));

// The schema, one migration per change, never edited once released. Later capabilities append here.
import type { Migration } from './migrations.js';

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'state',
    up: `create table state (
      key text primary key,
      value text not null,
      updated_at text not null
    )`,
  },
];

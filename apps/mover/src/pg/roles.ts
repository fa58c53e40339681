// Copying roles from the home node to a new node: every role that is not a built-in one, with
// its attributes and its password verifier (SCRAM-SHA-256 verifiers are stored and copied as they
// are, so the same password works), and role memberships. Existing roles are brought in line.
import type pg from 'pg';
import { ident, literal, type NodeAddr, type NodeSessions } from '../nodes/sessions.js';

interface RoleRow {
  rolname: string;
  rolsuper: boolean;
  rolinherit: boolean;
  rolcreaterole: boolean;
  rolcreatedb: boolean;
  rolcanlogin: boolean;
  rolreplication: boolean;
  rolbypassrls: boolean;
  rolconnlimit: number;
  rolpassword: string | null;
  rolvaliduntil: string | null;
}

function options(r: RoleRow): string {
  const flag = (on: boolean, word: string) => (on ? word : `NO${word}`);
  return [
    flag(r.rolsuper, 'SUPERUSER'),
    flag(r.rolinherit, 'INHERIT'),
    flag(r.rolcreaterole, 'CREATEROLE'),
    flag(r.rolcreatedb, 'CREATEDB'),
    flag(r.rolcanlogin, 'LOGIN'),
    flag(r.rolreplication, 'REPLICATION'),
    flag(r.rolbypassrls, 'BYPASSRLS'),
    `CONNECTION LIMIT ${r.rolconnlimit}`,
    r.rolpassword === null ? 'PASSWORD NULL' : `PASSWORD ${literal(r.rolpassword)}`,
    r.rolvaliduntil === null ? `VALID UNTIL 'infinity'` : `VALID UNTIL ${literal(r.rolvaliduntil)}`,
  ].join(' ');
}

async function readRoles(c: pg.ClientBase): Promise<RoleRow[]> {
  return (
    await c.query<RoleRow>(
      `select rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin, rolreplication,
              rolbypassrls, rolconnlimit, rolpassword, rolvaliduntil::text as rolvaliduntil
         from pg_authid where rolname !~ '^pg_' order by oid`,
    )
  ).rows;
}

/** Copies roles and memberships from `from` to `to`; resolves with how many roles it wrote. */
export async function copyRoles(
  nodes: NodeSessions,
  from: NodeAddr,
  to: NodeAddr,
): Promise<number> {
  const { roles, members } = await nodes.with(from, 'postgres', async (c) => ({
    roles: await readRoles(c),
    members: (
      await c.query<{ role: string; member: string; admin: boolean }>(
        `select r.rolname as role, m.rolname as member, am.admin_option as admin
           from pg_auth_members am join pg_roles r on r.oid = am.roleid join pg_roles m on m.oid = am.member
          where r.rolname !~ '^pg_' or m.rolname !~ '^pg_'`,
      )
    ).rows,
  }));
  return nodes.with(to, 'postgres', async (c) => {
    const existing = new Set((await readRoles(c)).map((r) => r.rolname));
    for (const r of roles) {
      // The role the mover logs in as keeps its password here: changing it under our own
      // connections would be a surprise, and it is the same role on every node anyway.
      const own =
        r.rolname === (await c.query<{ u: string }>('select current_user as u')).rows[0]!.u;
      const opts = own
        ? options({ ...r, rolpassword: null }).replace(/ PASSWORD NULL/, '')
        : options(r);
      await c.query(
        `${existing.has(r.rolname) ? 'ALTER' : 'CREATE'} ROLE ${ident(r.rolname)} WITH ${opts}`,
      );
    }
    for (const m of members)
      await c.query(
        `GRANT ${ident(m.role)} TO ${ident(m.member)}${m.admin ? ' WITH ADMIN OPTION' : ''}`,
      );
    return roles.length;
  });
}

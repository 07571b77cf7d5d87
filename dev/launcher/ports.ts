// Every port the stack will listen on is checked before anything starts, so a clash is one clear sentence
// (which port, who wanted it, who holds it, how to move it) instead of a stack half started and a trace from
// deep inside firebase-tools.

import { createServer } from 'node:net';
import { portToPid } from 'pid-port';
import { commandLineOf } from '../process-table.ts';
import { PORT_SPECS, type PortKey, type Ports } from './config.ts';
import { LauncherError } from './errors.ts';

export type PortClaim = (typeof PORT_SPECS)[number] & { port: number; host: string };

export function portClaims(ports: Ports, host: string, keys: readonly PortKey[]): PortClaim[] {
  return PORT_SPECS.filter((spec) => keys.includes(spec.key)).map((spec) => ({
    ...spec,
    port: ports[spec.key],
    host,
  }));
}

/** Resolves to the error code that stopped a listen on host:port, or undefined when the port is free. */
export function probePort(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? String(error)));
    // exclusive: a port held by another worker of this process counts as taken too.
    server.listen({ host, port, exclusive: true }, () => {
      server.close(() => resolve(undefined));
    });
  });
}

type PortHolder = { pid: number; command: string };

/** Who listens on the port, when the machine lets us see it (pid-port asks ss, lsof or netstat). */
async function holderOf(claim: PortClaim): Promise<PortHolder | undefined> {
  const pid = await portToPid({ port: claim.port, host: claim.host }).catch(() => undefined);
  return pid === undefined ? undefined : { pid, command: commandLineOf(pid) ?? '(command unknown)' };
}

export function describePortInUse(claim: PortClaim, holder?: PortHolder): string {
  const command =
    holder && holder.command.length > 120 ? `${holder.command.slice(0, 119)}…` : holder?.command;
  const who = holder ? ` by pid ${holder.pid} (${command})` : '';
  const hint =
    holder && /firebase|dev\/start\.ts|goody/i.test(holder.command)
      ? ' It looks like an earlier `npm start` (or emulator) still running: stop it first.'
      : '';
  return (
    `Port ${claim.port} on ${claim.host} is already in use${who}; ${claim.purpose} needs it.${hint}\n` +
    `  Free the port, or move it: ${claim.env}=<another port> npm start`
  );
}

export function findDuplicateClaims(claims: readonly PortClaim[]): string[] {
  return claims.flatMap((claim) => {
    const first = claims.find((other) => other.port === claim.port);
    if (first === claim || !first) return [];
    const both = `${first.purpose} (${first.env}) and ${claim.purpose} (${claim.env})`;
    return [`Port ${claim.port} is given to both ${both}; each needs a port of its own.`];
  });
}

/** Throws one LauncherError listing every clash; returns when every port is free. */
export async function assertPortsFree(claims: readonly PortClaim[]): Promise<void> {
  const problems = findDuplicateClaims(claims);
  const results = await Promise.all(claims.map((claim) => probePort(claim.host, claim.port)));
  for (const [index, claim] of claims.entries()) {
    const code = results[index];
    if (code === undefined) continue;
    problems.push(
      code === 'EADDRINUSE'
        ? describePortInUse(claim, await holderOf(claim))
        : `Cannot listen on ${claim.host}:${claim.port} for ${claim.purpose} (${code}).\n  Move it: ${claim.env}=<another port> npm start`,
    );
  }
  if (problems.length > 0) {
    throw new LauncherError(`Nothing was started.\n${problems.join('\n')}`, 2);
  }
}

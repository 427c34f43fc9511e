/**
 * Webhook settings shared by `serve` and `webhooks`: flags over `webhooks` in the config file over defaults, and the
 * shared secret, which comes from EVSYNC_WEBHOOK_SECRET only and is scrubbed from all output from the first byte
 * (createApp, secret-env.ts).
 */
import { DAEMON_DEFAULTS } from '../../schemas/daemon-settings.js';
import { parseListen } from '../sync/capture/index.js';
import type { Ctx } from './context.js';
import { errorMessage, UsageError } from './errors.js';
import { ownWords } from './output/own-words.js';
import { checkedSecret, OwnWordsUsageError } from './secret-env.js';

export interface WebhookSettings {
  listen: string;
  path: string;
  secretHeader: string;
  maxBodyBytes: number;
  groupName: string;
  retentionDays: number;
  reconcileEveryHours: number;
  paths: { webhooks: string; groups: string };
}

/** Flags over the config file over the daemon's defaults (schemas/daemon-settings.ts). */
export function webhookSettings(
  ctx: Ctx,
  flags: { listen?: string; path?: string; reconcileEvery?: number },
): WebhookSettings {
  const w = ctx.config.values.webhooks ?? {};
  const d = DAEMON_DEFAULTS.webhooks;
  const listen = flags.listen ?? w.listen ?? d.listen;
  const path = flags.path ?? w.path ?? d.path;
  // Said before anything starts, as usage errors (exit 2): the address and path are what the user typed.
  try {
    parseListen(listen);
  } catch (err) {
    throw new UsageError(`${errorMessage(err)} (the port from 0 to 65535)`);
  }
  if (!path.startsWith('/')) {
    throw new UsageError(`${flags.path ? '--path' : 'webhooks.path'} ${path}: must start with /, e.g. /${path}`);
  }
  return {
    listen,
    path,
    secretHeader: w.secretHeader ?? d.secretHeader,
    maxBodyBytes: w.maxBodyBytes ?? d.maxBodyBytes,
    groupName: w.groupName ?? d.groupName,
    retentionDays: w.journalRetentionDays ?? d.journalRetentionDays,
    reconcileEveryHours:
      flags.reconcileEvery ?? ctx.config.values.reconcileEveryHours ?? DAEMON_DEFAULTS.reconcileEveryHours,
    paths: { webhooks: w.paths?.webhooks ?? d.paths.webhooks, groups: w.paths?.groups ?? d.paths.groups },
  };
}

/** The shared secret, refused (exit 2) when unset or unfit; never printed (scrubbed since createApp). */
export function webhookSecret(ctx: Ctx): string {
  const secret = checkedSecret(ctx.io.env, 'EVSYNC_WEBHOOK_SECRET');
  if (!secret) {
    throw new OwnWordsUsageError(
      ownWords`EVSYNC_WEBHOOK_SECRET is not set (generate one, e.g. \`openssl rand -hex 32\`)`,
    );
  }
  return secret;
}

/**
 * `evsync webhooks install|status|remove`: the service side of change capture. `install` creates (idempotently) a
 * webhook group carrying the secret header and one webhook per trigger object the selected streams need; `status`
 * says what is there and whether it matches (the secret is compared by hash, never shown); `remove` deletes the
 * group's webhooks and the group. Each costs two list calls (20 credits) plus 1 credit per change.
 */
import type { Command } from 'commander';
import { selectStreams } from '../../../connectors/index.js';
import type { WebhookObject } from '../../../connectors/types.js';
import type { WebhookSetup } from '../../sync/capture/index.js';
import { type App, action, type Ctx, connection, createClient } from '../context.js';
import { ExitCode, UsageError } from '../errors.js';
import { parseStreamsFlag } from '../options.js';
import { formatTable, toJson } from '../output/format.js';
import { webhookSecret, webhookSettings } from '../webhook-settings.js';

interface WebhookFlags {
  url?: string;
  streams?: string;
}

function objectsOf(streams: string): WebhookObject[] {
  return selectStreams(streams).flatMap((s) => (s.webhook ? [s.webhook.object] : []));
}

function setupFrom(ctx: Ctx, flags: WebhookFlags, url: string): WebhookSetup {
  const settings = webhookSettings(ctx, {});
  const objects = objectsOf(flags.streams ?? 'core');
  if (objects.length === 0) throw new UsageError(`--streams ${flags.streams}: no selected stream is fed by webhooks`);
  return {
    url,
    secret: webhookSecret(ctx),
    secretHeader: settings.secretHeader,
    groupName: settings.groupName,
    objects,
    paths: settings.paths,
  };
}

function checkUrl(url: string | undefined): string {
  if (!url) throw new UsageError('--url <public url> is required: the address the service will POST deliveries to');
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(`--url ${url}: expected an absolute http(s) URL`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new UsageError(`--url ${url}: expected http(s)`);
  return url;
}

async function withClient<T>(
  ctx: Ctx,
  work: (client: import('../../api/index.js').ApiClient) => Promise<T>,
): Promise<T> {
  const client = await createClient(ctx, connection(ctx));
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}

async function install(ctx: Ctx, flags: WebhookFlags): Promise<number> {
  const url = checkUrl(flags.url);
  if (url.startsWith('http:') && !/^http:\/\/(127\.|localhost|\[::1\])/.test(url)) {
    ctx.log.warn(`${url} is plain http: the secret header would cross the network in clear; put TLS in front`);
  }
  const setup = setupFrom(ctx, flags, url);
  const { installWebhooks } = await import('../../sync/capture/index.js');
  const report = await withClient(ctx, (c) => installWebhooks(c, setup));
  if (ctx.json) ctx.out.write(`${toJson(report, 2)}\n`);
  else {
    ctx.out.write(`webhook group "${setup.groupName}" (id ${report.group.id}): ${report.group.action}\n`);
    ctx.out.write(
      formatTable(
        ['object', 'webhook id', 'action'],
        report.hooks.map((h) => ({ object: h.object, 'webhook id': h.id, action: h.action })),
      ),
    );
    if (report.others.length) {
      ctx.out.write(
        `also in the group (not needed by these streams, left as they are): ${report.others.map((o) => `${o.object} #${o.id}`).join(', ')}\n`,
      );
    }
  }
  return ExitCode.Done;
}

async function status(ctx: Ctx, flags: WebhookFlags): Promise<number> {
  const setup = setupFrom(ctx, flags, flags.url ?? '');
  const { webhookStatus } = await import('../../sync/capture/index.js');
  // Without --url the URL is not checked (whatever the webhooks point at is reported as it is).
  const report = await withClient(ctx, (c) => webhookStatus(c, setup));
  if (!flags.url) for (const h of report.hooks) h.problems = h.problems.filter((p) => p !== 'url differs');
  for (const h of report.hooks) h.ok = h.id !== null && h.problems.length === 0;
  const ok = report.group?.secretMatches === true && report.hooks.every((h) => h.ok);
  if (ctx.json) ctx.out.write(`${toJson({ ok, ...report }, 2)}\n`);
  else {
    ctx.out.write(
      report.group
        ? `webhook group "${report.group.name}" (id ${report.group.id}): secret header ${report.group.secretMatches ? 'matches EVSYNC_WEBHOOK_SECRET' : 'DOES NOT match EVSYNC_WEBHOOK_SECRET'}\n`
        : `no webhook group "${setup.groupName}": run \`evsync webhooks install --url <public url>\`\n`,
    );
    ctx.out.write(
      formatTable(
        ['object', 'webhook id', 'ok', 'problems'],
        report.hooks.map((h) => ({
          object: h.object,
          'webhook id': h.id ?? 'none',
          ok: h.ok ? 'yes' : 'no',
          problems: h.problems.join(', '),
        })),
      ),
    );
  }
  return ok ? ExitCode.Done : ExitCode.Failure;
}

async function remove(ctx: Ctx, flags: WebhookFlags): Promise<number> {
  const setup = setupFrom(ctx, flags, '');
  const { removeWebhooks } = await import('../../sync/capture/index.js');
  const report = await withClient(ctx, (c) => removeWebhooks(c, setup));
  if (ctx.json) ctx.out.write(`${toJson(report, 2)}\n`);
  else if (report.group === null) ctx.out.write(`no webhook group "${setup.groupName}": nothing to remove\n`);
  else ctx.out.write(`removed webhook group ${report.group} and its ${report.hooks.length} webhook(s)\n`);
  return ExitCode.Done;
}

export function registerWebhooksCommand(program: Command, app: App): void {
  const cmd = program
    .command('webhooks')
    .description('set the service up to push changes to `evsync serve` (install, status, remove)')
    .addHelpText(
      'after',
      `
All three need EVSYNC_WEBHOOK_SECRET (the value \`evsync serve\` runs with). On the simulator, changes made on
demand need \`evsync simulator --control\` (POST /_control/mutate); it delivers to loopback receivers only.

Examples:
  $ evsync webhooks install --url https://evsync.example.com/webhooks
  $ evsync webhooks status --url https://evsync.example.com/webhooks
  $ evsync webhooks remove`,
    );
  const streams = (c: Command) =>
    c.option('--streams <list>', 'streams whose trigger objects are needed (default core)', parseStreamsFlag);
  streams(
    cmd
      .command('install')
      .description('create (idempotently) a webhook group with the secret header and one webhook per trigger object')
      .option('--url <url>', 'the public URL deliveries go to (your reverse proxy in front of evsync serve)'),
  )
    .addHelpText(
      'after',
      `
Needs EVSYNC_WEBHOOK_SECRET (the same value \`evsync serve\` runs with). Costs 20 credits plus 1 per webhook made.

Examples:
  $ evsync webhooks install --url https://evsync.example.com/webhooks
  $ evsync webhooks install --url https://evsync.example.com/webhooks --streams all`,
    )
    .action(action<WebhookFlags>(app, install));
  streams(
    cmd
      .command('status')
      .description('what is installed, and whether it matches (exit 1 when something is missing or differs)')
      .option('--url <url>', 'also check that every webhook points at this URL'),
  )
    .addHelpText(
      'after',
      `
Costs 20 credits (two list calls). Exit 0 when every webhook is there and matches, 1 otherwise.

Examples:
  $ evsync webhooks status
  $ evsync webhooks status --url https://evsync.example.com/webhooks --json | jq .ok`,
    )
    .action(action<WebhookFlags>(app, status));
  streams(cmd.command('remove').description("delete the group's webhooks and the group"))
    .addHelpText(
      'after',
      `
Deletes only the group named by webhooks.groupName (default "evsync") and its webhooks; others are left alone.

Examples:
  $ evsync webhooks remove
  $ evsync webhooks remove --json`,
    )
    .action(action<WebhookFlags>(app, remove));
}

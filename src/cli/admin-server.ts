/**
 * The daemon's admin address as the command line sets it up (`--admin-listen`, EVSYNC_ADMIN_TOKEN): checked before
 * anything opens, and served by the daemon's admin server (src/daemon/admin-server.ts) with the status page rendered
 * here (src/cli/status-page).
 */
import { DAEMON_DEFAULTS } from '../../schemas/daemon-settings.js';
import { type AdminServer, type AdminServerOptions, isLoopback, startAdminHttp } from '../daemon/admin-server.js';
import { parseListen } from '../sync/capture/server.js';
import type { Ctx } from './context.js';
import { UsageError } from './errors.js';
import { checkedSecret, secretRefusal } from './secret-env.js';
import type { StatusReport } from './status/document.js';
import { renderStatusPage } from './status-page/page.js';

export type { AdminServer } from '../daemon/admin-server.js';

const DEFAULT_ADMIN_LISTEN = DAEMON_DEFAULTS.adminListen;
/** The environment variable holding the admin token (required off loopback). */
export const ADMIN_TOKEN_ENV = 'EVSYNC_ADMIN_TOKEN';

/**
 * Why these admin settings cannot start (a configuration error), or null: a non-loopback address needs a token, and
 * a token, wherever it is set, must pass the secrets' rule (at least 16 characters; secret-env.ts). A short one is
 * refused on loopback too: once set it guards every request, and other users of the machine reach loopback.
 */
export function adminSettingsProblem(listen: string, token: string | undefined): string | null {
  const refused = token ? secretRefusal(ADMIN_TOKEN_ENV, token) : null;
  if (refused) return refused.text;
  const { host } = parseListen(listen);
  if (isLoopback(host)) return null;
  if (!token) {
    return `--admin-listen ${listen} is not a loopback address: set ${ADMIN_TOKEN_ENV} (e.g. \`openssl rand -hex 32\`); requests must then send "Authorization: Bearer <token>"`;
  }
  return null;
}

/**
 * The admin address and token a command was given (`--admin-listen`, EVSYNC_ADMIN_TOKEN), checked before anything
 * opens (a usage error, exit 2); null for `off`. A token it accepts is scrubbed from all output (since createApp);
 * a refused one is said in evsync's own words, never echoed (secret-env.ts).
 */
export function adminSettings(ctx: Ctx, flag: string | undefined): { listen: string; token?: string } | null {
  const listen = flag ?? DEFAULT_ADMIN_LISTEN;
  if (listen === 'off') return null;
  const token = checkedSecret(ctx.io.env, ADMIN_TOKEN_ENV);
  let problem: string | null;
  try {
    problem = adminSettingsProblem(listen, token);
  } catch (err) {
    problem = `--admin-listen ${listen}: expected host:port (e.g. ${DEFAULT_ADMIN_LISTEN}) or off (${err instanceof Error ? err.message : String(err)})`;
  }
  if (problem) throw new UsageError(problem);
  return token ? { listen, token } : { listen };
}

/** Starts the admin server; throws (before listening) when the settings are refused, see adminSettingsProblem. */
export async function startAdminServer(o: Omit<AdminServerOptions<StatusReport>, 'page'>): Promise<AdminServer> {
  const problem = adminSettingsProblem(o.listen, o.token);
  if (problem) throw new Error(problem);
  return startAdminHttp({ ...o, page: (report) => renderStatusPage(report, { live: true }) });
}

/**
 * The secrets evsync reads from the environment: which are scrubbed from all output, and the rule that refuses the
 * ones evsync itself checks (the webhook secret and the admin token: one rule for both).
 *
 * A value refused as too short is not scrubbed. evsync never uses it (the command stops at the refusal), so it
 * never prints it, and a value that short is as likely as not a word of evsync's own messages: scrubbed, it turned
 * "EVSYNC_ADMIN_TOKEN is too short" into "EVSYNC_ADMIN_TOKEN is too [REDACTED]". Every value evsync would use is
 * scrubbed, and so is one refused for a line break: that may be a real secret pasted with a newline.
 * The refusals themselves are evsync's own words (own-words.ts): they name the setting and the rule, never the
 * value, and are printed whole even when an accepted secret of another setting happens to equal some of them.
 */
import { MIN_SECRET_LENGTH } from '../sync/capture/secret.js';
import { moreSecretsIn } from './accounts.js';
import { UsageError } from './errors.js';
import { type OwnWords, ownWords, type SettingName } from './output/own-words.js';

/** A usage error (exit 2) said in evsync's own words only: printed whole, never scrubbed (see OwnWords). */
export class OwnWordsUsageError extends UsageError {
  constructor(readonly words: OwnWords) {
    super(words.text);
  }
}

/** The secrets evsync itself judges before using them. */
const CHECKED: readonly SettingName[] = ['EVSYNC_WEBHOOK_SECRET', 'EVSYNC_ADMIN_TOKEN'];

type Env = Readonly<Record<string, string | undefined>>;

function tooShort(value: string): boolean {
  return value.length < MIN_SECRET_LENGTH;
}

/**
 * Why evsync refuses `value` for `name`, or null: shorter than 16 characters (the only thing between the internet
 * and the journal, or the status page), or holding a line break or NUL (it travels in an HTTP header).
 */
export function secretRefusal(name: SettingName, value: string): OwnWords | null {
  if (tooShort(value)) return ownWords`${name} is too short (at least ${MIN_SECRET_LENGTH} characters)`;
  if (/[\r\n\0]/.test(value)) return ownWords`${name} holds a line break or NUL (it must fit in an HTTP header)`;
  return null;
}

/** The value of `name`, refused (a usage error, exit 2) when unfit; undefined when unset. */
export function checkedSecret(env: Env, name: SettingName): string | undefined {
  const value = env[name];
  if (!value) return undefined;
  const refusal = secretRefusal(name, value);
  if (refusal) throw new OwnWordsUsageError(refusal);
  return value;
}

/** Every secret in the environment to scrub from output, from the first byte whatever the command (see above). */
export function secretsToScrub(env: Env): string[] {
  const checked = CHECKED.map((name) => env[name]).filter((v): v is string => !!v && !tooShort(v));
  return [env.EVSYNC_CLIENT_SECRET, env.EVSYNC_CREDENTIALS, ...checked, ...moreSecretsIn(env)].filter(
    (s): s is string => !!s,
  );
}

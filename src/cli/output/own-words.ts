/**
 * evsync's own words: text made only of evsync's constant text, numbers and the names of its settings, never of a
 * value from outside (the environment, a flag, a file, an answer). Secrets are scrubbed from everything printed,
 * but not from these words: they cannot disclose a value, since no value went into them, while scrubbing them
 * would (with EVSYNC_ADMIN_TOKEN=short, "EVSYNC_ADMIN_TOKEN is too [REDACTED]" names the token to anyone who reads
 * evsync's source). A secret that merely equals some of these words is still scrubbed wherever else it appears,
 * and wherever it straddles them and other text (see ScrubbedStream).
 *
 * Made only by the `ownWords` tag, whose placeholders the compiler holds to numbers, setting names and other own
 * words: a string from outside cannot be put in.
 */

/** The settings evsync's own words may name. */
export type SettingName = 'EVSYNC_WEBHOOK_SECRET' | 'EVSYNC_ADMIN_TOKEN';

type OwnValue = number | SettingName | OwnWords;

export class OwnWords {
  private constructor(readonly text: string) {}

  /** The tag (exported as `ownWords`): `ownWords\`${name} is too short (at least ${16} characters)\``. */
  static of(strings: TemplateStringsArray, ...values: readonly OwnValue[]): OwnWords {
    // A template's strings are frozen: a hand-made array passed as if it were one is refused.
    if (!Object.isFrozen(strings)) throw new TypeError('ownWords is a template tag');
    let text = strings[0] ?? '';
    values.forEach((value, i) => {
      text += (value instanceof OwnWords ? value.text : String(value)) + (strings[i + 1] ?? '');
    });
    return new OwnWords(text);
  }
}

export const ownWords = OwnWords.of;

/** ANSI styling, only on a terminal and never when NO_COLOR is set (https://no-color.org) or --no-color is given. */
export interface Style {
  readonly enabled: boolean;
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
  green(s: string): string;
  cyan(s: string): string;
}

function wrap(open: number, close: number, enabled: boolean): (s: string) => string {
  return enabled ? (s) => `\u001b[${open}m${s}\u001b[${close}m` : (s) => s;
}

export function createStyle(enabled: boolean): Style {
  return {
    enabled,
    bold: wrap(1, 22, enabled),
    dim: wrap(2, 22, enabled),
    red: wrap(31, 39, enabled),
    yellow: wrap(33, 39, enabled),
    green: wrap(32, 39, enabled),
    cyan: wrap(36, 39, enabled),
  };
}

export function colorWanted(
  stream: { isTTY?: boolean },
  env: Readonly<Record<string, string | undefined>>,
  flag: boolean | undefined,
): boolean {
  if (flag === false) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return true;
  return stream.isTTY === true;
}

const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

export function stripAnsi(s: string): string {
  return s.replace(ANSI, '');
}

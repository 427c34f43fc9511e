/** JSON values as records carry them. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/**
 * Custom field values (`c_<id>`) ride on a record under a symbol key: JSON.stringify skips symbol keys, so a record
 * holding every base field can be serialized as-is, while projections that name `c_*` fields read them from here.
 */
export const CUSTOM: unique symbol = Symbol('custom fields');

export interface Rec {
  [field: string]: Json;
  [CUSTOM]?: Record<string, Json>;
}

export type CustomDefType = 'text' | 'textarea' | 'dropdown' | 'checkbox' | 'radio' | 'date';

/** A custom field definition as the definition streams serve it (id, name, type, choices). */
export interface CustomDef {
  id: number;
  name: string;
  type: CustomDefType;
  choices: { id: number; value: string }[];
}

export function isChoiceType(type: string): boolean {
  return type === 'dropdown' || type === 'checkbox' || type === 'radio';
}

import type { Rng } from '../core/random.js';
import { type CustomDef, type CustomDefType, isChoiceType, type Json, type Rec } from '../core/record.js';

/** Templates of custom field definitions per definitions stream. */
interface DefTemplate {
  name: string;
  type: CustomDefType;
  choices?: string[];
}

export const DEF_TEMPLATES: Record<string, DefTemplate[]> = {
  event_questions: [
    {
      name: 'Dietary requirements',
      type: 'dropdown',
      choices: ['None', 'Vegetarian', 'Vegan', 'Halal', 'Kosher', 'Gluten-free'],
    },
    { name: 'Topics of interest', type: 'checkbox', choices: ['AI', 'Cloud', 'Security', 'Data', 'Leadership'] },
    { name: 'How did you hear about us?', type: 'text' },
    { name: 'T-shirt size', type: 'radio', choices: ['XS', 'S', 'M', 'L', 'XL', 'XXL'] },
  ],
  contact_fields: [
    { name: 'Membership number', type: 'text' },
    { name: 'Preferred contact method', type: 'dropdown', choices: ['Email', 'Phone', 'Post'] },
    { name: 'Interests', type: 'checkbox', choices: ['Webinars', 'Conferences', 'Newsletters'] },
  ],
  session_fields: [
    { name: 'Level', type: 'dropdown', choices: ['Beginner', 'Intermediate', 'Advanced'] },
    { name: 'CPE credits', type: 'text' },
    { name: 'Room setup', type: 'radio', choices: ['Theatre', 'Classroom', 'Cabaret'] },
  ],
  sponsor_fields: [
    { name: 'Booth number', type: 'text' },
    { name: 'Industry', type: 'dropdown', choices: ['Software', 'Hardware', 'Services', 'Media'] },
  ],
  event_fields: [
    { name: 'Region', type: 'dropdown', choices: ['AMER', 'EMEA', 'APAC'] },
    { name: 'Cost centre', type: 'text' },
    { name: 'Internal notes', type: 'textarea' },
  ],
};

/** Questions an event with more than the four usual ones asks besides them (history size: 20-40 per event). */
const MORE_QUESTIONS: DefTemplate[] = [
  { name: 'Arrival date', type: 'date' },
  { name: 'Company size', type: 'dropdown', choices: ['1-10', '11-50', '51-250', '251-1000', '1000+'] },
  { name: 'Workshops', type: 'checkbox', choices: ['Intro', 'Deep dive', 'Hands-on lab', 'Office hours'] },
  { name: 'Session format', type: 'radio', choices: ['In person', 'Online'] },
  { name: 'Comments', type: 'textarea' },
  { name: 'Job function', type: 'text' },
];

/**
 * The template of an event's i-th question: the four usual ones, then the others in turn, numbered from their
 * second round (`Comments 2`) so that the labels of one event stay distinct.
 */
export function questionTemplate(i: number): DefTemplate {
  const usual = DEF_TEMPLATES.event_questions!;
  if (i < usual.length) return usual[i]!;
  const k = i - usual.length;
  const t = MORE_QUESTIONS[k % MORE_QUESTIONS.length]!;
  const round = Math.floor(k / MORE_QUESTIONS.length);
  return round === 0 ? t : { ...t, name: `${t.name} ${round + 1}` };
}

/** Choice ids derive from the definition id, so they are unique across definitions. */
export function makeDef(id: number, template: DefTemplate): CustomDef {
  return {
    id,
    name: template.name,
    type: template.type,
    choices: (template.choices ?? []).map((value, k) => ({ id: id * 10 + k + 1, value })),
  };
}

export function defRecord(def: CustomDef, sortOrder: number, eventId?: number): Rec {
  const rec: Rec = { id: def.id };
  if (eventId !== undefined) rec.event_id = eventId;
  rec.name = def.name;
  rec.type = def.type;
  rec.choices = def.choices as unknown as Json;
  rec.required = sortOrder === 0;
  rec.sort_order = sortOrder;
  return rec;
}

/** Reads a definition back from its record (the record is the truth once mutations may have changed it). */
export function defFromRecord(rec: Rec): CustomDef {
  return {
    id: rec.id as number,
    name: rec.name as string,
    type: rec.type as CustomDefType,
    choices: (rec.choices as { id: number; value: string }[] | null) ?? [],
  };
}

const TEXT_ANSWERS = [
  '',
  '',
  'LinkedIn',
  'A colleague',
  'Newsletter',
  'Search engine',
  'Podcast',
  'M-10442',
  'Ünïcödé',
];

/** A stored value for one custom field: a scalar for text fields, an array of {id, value} for choice fields. */
export function customValue(def: CustomDef, r: Rng): Json {
  if (isChoiceType(def.type)) {
    if (def.choices.length === 0 || r.chance(0.15)) return [];
    if (def.type === 'checkbox')
      return r.sample(def.choices, r.int(1, Math.min(3, def.choices.length))).map((c) => ({ ...c }));
    return [{ ...r.pick(def.choices) }];
  }
  if (def.type === 'date') return r.chance(0.5) ? `2025-0${r.int(1, 9)}-1${r.int(0, 9)}` : '';
  return r.pick(TEXT_ANSWERS);
}

/** The value a field holds on a record that predates the field's definition. */
export function emptyCustomValue(def: CustomDef): Json {
  return isChoiceType(def.type) ? [] : '';
}

/** Values of all definitions, keyed `c_<id>`. */
export function customValues(defs: readonly CustomDef[], r: Rng): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const def of defs) out[`c_${def.id}`] = customValue(def, r);
  return out;
}

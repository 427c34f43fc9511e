/**
 * The simulator's service folder: the routes of the spec (auth, lists, singles, writes, webhook management), its
 * credits and faults, and background mutations; this file holds the write operations.
 */
import type { Rec } from '../core/record.js';
import { badRequest, HttpError, notFound, unprocessable } from '../http/errors.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import { project } from '../query/project.js';
import { STREAM_BY_NAME } from '../schema/streams.js';
import { apiChange, nowText, type ServiceContext } from './context.js';
import { findAny, findOwned, updateRecord } from './lookup.js';

/**
 * The write operations the spec names. Status codes the spec leaves open are ours: the speaker assignment answers
 * 201 with the association (200 when it already existed), deletes answer 204 without a body, check-in and
 * approve/deny answer 200 with the registrant. Each change is reported as made by `api_call` (webhooks).
 */

const SAME_EVENT = 'The speaker and the session must belong to the same event.';

/** POST /speakers/{speaker_id}/session/{session_id} */
export function assignSpeaker(ctx: ServiceContext) {
  return (req: ApiRequest): ApiResponse => {
    const world = ctx.world;
    const speaker = findOwned(world, 'speakers', req.params.speaker_id!, req.account);
    const session = findOwned(world, 'sessions', req.params.session_id!, req.account);
    if (speaker.rec.event_id !== session.rec.event_id) throw unprocessable('session_id', SAME_EVENT);
    const speakerId = speaker.rec.id as number;
    const sessionId = session.rec.id as number;
    let links = world.speakerSessions.get(speakerId);
    if (!links) {
      links = new Map();
      world.speakerSessions.set(speakerId, links);
    }
    const existing = links.get(sessionId);
    if (existing) return { status: 200, body: { speaker_id: speakerId, session_id: sessionId, ...existing } };
    const now = nowText(ctx);
    const link = { created_at: now, updated_at: now };
    links.set(sessionId, link);
    // The speaker's session list changed: move its updated_at so incremental syncs of speakers see it.
    updateRecord(speaker, {}, now);
    apiChange(ctx, 'speakers', 'update', speaker);
    return { status: 201, body: { speaker_id: speakerId, session_id: sessionId, ...link } };
  };
}

/**
 * DELETE /image/{image_type}/{image_id}/{field_id}. Image types: 1 registrant, 2 speaker, 3 sponsor, 4 contact.
 * Field 1 is the object's built-in image (`profile_picture`; a sponsor's `logo_id`). A field without an image is a 404.
 */
const IMAGE_TYPES: Record<number, { stream: string; field: string }> = {
  1: { stream: 'registrants', field: 'profile_picture' },
  2: { stream: 'speakers', field: 'profile_picture' },
  3: { stream: 'sponsors', field: 'logo_id' },
  4: { stream: 'contacts', field: 'profile_picture' },
};

export function deleteImage(ctx: ServiceContext) {
  return (req: ApiRequest): ApiResponse => {
    const type = IMAGE_TYPES[req.params.image_type!];
    if (!type || req.params.field_id !== 1) throw notFound();
    const found = findOwned(ctx.world, type.stream, req.params.image_id!, req.account);
    const value = found.rec[type.field];
    if (value === null || value === '' || value === undefined) throw notFound();
    updateRecord(found, { [type.field]: type.field === 'logo_id' ? null : '' }, nowText(ctx));
    apiChange(ctx, type.stream, 'update', found);
    return { status: 204 };
  };
}

/**
 * DELETE /sponsors/field/{id} and /sessions/field/{id}: the definition goes; records only ever show `c_*` values of
 * live definitions, so the stored values are gone with it (and `c_<id>` in `fields` is then ignored as unknown).
 */
export function deleteField(ctx: ServiceContext, stream: 'sponsor_fields' | 'session_fields') {
  return (req: ApiRequest): ApiResponse => {
    const found = findOwned(ctx.world, stream, req.params.field_id!, req.account);
    found.part.remove(found.pos);
    // A definition is no trigger object: the change is journaled, no webhook fires (nor for the records it reshapes).
    apiChange(ctx, stream, 'delete', found);
    return { status: 204 };
  };
}

const CHECKIN_STATUSES = ['attended', 'confirmed', 'no_show'];

function fullRegistrant(rec: Rec): Rec {
  const spec = STREAM_BY_NAME.get('registrants')!;
  return project(rec, { keys: Object.keys(spec.fields), customs: [], identity: false });
}

/** POST /registrants/checkin, form `id` and `status` (attended | confirmed | no_show). */
export function checkIn(ctx: ServiceContext) {
  return (req: ApiRequest): ApiResponse => {
    const idText = (req.body.id ?? '').trim();
    const status = (req.body.status ?? '').trim();
    const errors: { field: string; message: string }[] = [];
    if (idText === '') errors.push({ field: 'id', message: 'Id cannot be blank.' });
    else if (!/^\d+$/.test(idText)) errors.push({ field: 'id', message: 'Id must be an integer.' });
    if (!CHECKIN_STATUSES.includes(status)) errors.push({ field: 'status', message: 'Status is invalid.' });
    if (errors.length > 0) throw new HttpError(422, 'Data Validation Failed.', errors);
    const found = findOwned(ctx.world, 'registrants', Number(idText), req.account);
    const now = nowText(ctx);
    const rec = updateRecord(
      found,
      { registration_status: status, checked_in_at: status === 'attended' ? now : null },
      now,
    );
    apiChange(ctx, 'registrants', 'update', found);
    return { status: 200, body: fullRegistrant(rec) };
  };
}

/**
 * Apply to Attend. The spec shows no paths; ours are POST /registrants/{id}/approve and POST /registrants/{id}/deny
 * (no body). Only a `pending` registrant of an event with `apply_to_attend` enabled moves (to approved / denied);
 * anything else is a 400.
 */
export function decide(ctx: ServiceContext, verdict: 'approved' | 'denied') {
  return (req: ApiRequest): ApiResponse => {
    const found = findOwned(ctx.world, 'registrants', req.params.id!, req.account);
    const event = findAny(ctx.world, 'events', found.rec.event_id as number);
    if (event?.rec.apply_to_attend !== true) throw badRequest('Apply to Attend is not enabled for this event.');
    if (found.rec.registration_status !== 'pending') {
      throw badRequest(
        `Only pending registrants can be ${verdict}; this one is ${String(found.rec.registration_status)}.`,
      );
    }
    const rec = updateRecord(found, { registration_status: verdict }, nowText(ctx));
    apiChange(ctx, 'registrants', 'update', found);
    return { status: 200, body: fullRegistrant(rec) };
  };
}

import { Router } from '../http/router.js';
import { STREAMS } from '../schema/streams.js';
import { assignSpeaker, checkIn, decide, deleteField, deleteImage } from './actions.js';
import type { ServiceContext } from './context.js';
import { listHandler } from './lists.js';
import { feeHandler, singleHandler } from './singles.js';
import { createGroup, createWebhook, deleteGroup, deleteWebhook, updateGroup, updateWebhook } from './webhook-admin.js';

/** The service's routes under /v1 (the token endpoint is handled before routing: it takes Basic credentials). */
export function buildRouter(ctx: ServiceContext): Router {
  const router = new Router();
  for (const spec of STREAMS) router.add('GET', spec.path, 'list', listHandler(ctx, spec));
  router.add('POST', '/registrants/checkin', 'other', checkIn(ctx));
  router.add('DELETE', '/sponsors/field/{field_id}', 'other', deleteField(ctx, 'sponsor_fields'));
  router.add('DELETE', '/sessions/field/{field_id}', 'other', deleteField(ctx, 'session_fields'));
  router.add('DELETE', '/image/{image_type}/{image_id}/{field_id}', 'other', deleteImage(ctx));
  router.add('POST', '/speakers/{speaker_id}/session/{session_id}', 'other', assignSpeaker(ctx));
  router.add('POST', '/registrants/{id}/approve', 'other', decide(ctx, 'approved'));
  router.add('POST', '/registrants/{id}/deny', 'other', decide(ctx, 'denied'));
  router.add('GET', '/packages/{id}/fee', 'other', feeHandler(ctx, 'packages'));
  router.add('GET', '/sessions/{id}/fee', 'other', feeHandler(ctx, 'sessions'));
  router.add('POST', '/webhooks', 'other', createWebhook(ctx));
  router.add('PUT', '/webhooks/{id}', 'other', updateWebhook(ctx));
  router.add('DELETE', '/webhooks/{id}', 'other', deleteWebhook(ctx));
  router.add('POST', '/webhook-groups', 'other', createGroup(ctx));
  router.add('PUT', '/webhook-groups/{id}', 'other', updateGroup(ctx));
  router.add('DELETE', '/webhook-groups/{id}', 'other', deleteGroup(ctx));
  for (const spec of STREAMS) {
    if (spec.single) router.add('GET', `${spec.path}/{id}`, 'other', singleHandler(ctx, spec));
  }
  return router;
}

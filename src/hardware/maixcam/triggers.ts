// Camera detections that start agent turns, judged without the model like GPIO edges: the label,
// the camera and a minimum confidence pick the detections a trigger cares about; an EdgeFilter then
// makes one sighting of many frames (every detection restarts the quiet time of debounceMs) and
// applies the rate limit, and a camera that keeps firing is reported once, not per frame.
import { count } from '../../counters.js';
import type { PinclawConfig } from '../../config/schema.js';
import type { NewInbound } from '../../store/queue.js';
import { log as defaultLog, type Logger } from '../../log.js';
import { EdgeFilter } from '../triggers/edge-filter.js';
import { routeSession } from '../triggers/runner.js';
import type { Detection } from './server.js';

export type CameraTrigger = PinclawConfig['hardware']['maixcam']['triggers'][number];

export interface DetectionTriggerDeps {
  triggers: readonly CameraTrigger[];
  submit(msg: NewInbound): unknown;
  knownChannels?: readonly string[];
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export function detectionTriggers(d: DetectionTriggerDeps): (det: Detection) => void {
  const log = d.log ?? defaultLog;
  const live = d.triggers.flatMap((t, i) => {
    if (!t.session || !t.message) {
      log.error(`hardware.maixcam.triggers[${i}]: session and message are required; this trigger is off`);
      return [];
    }
    return [{ t, session: t.session, message: t.message, filter: new EdgeFilter({ edge: 'both', debounceMs: t.debounceMs, maxPerWindow: t.rateLimit.max, windowMs: t.rateLimit.perSeconds * 1000 }) }];
  });
  const submit = (session: string, text: string, meta: Record<string, unknown>) => {
    try {
      const { channel, chatId } = routeSession(session, d.knownChannels);
      const r = d.submit({ sessionKey: session, channel, chatId, sender: 'hardware', text, meta });
      count('triggers', { source: 'camera' });
      if (r instanceof Promise) r.catch((err: unknown) => log.error(`camera trigger: the message could not be queued: ${(err as Error).message}`));
    } catch (err) {
      log.error(`camera trigger: the message could not be queued: ${(err as Error).message}`);
    }
  };
  return (det) => {
    for (const x of live) {
      if (x.t.label !== undefined && x.t.label !== det.label) continue;
      if (x.t.camera !== undefined && x.t.camera !== det.camera) continue;
      if (det.confidence < x.t.minConfidence) continue;
      const v = x.filter.offer('rising', det.receivedAt);
      if (!v.pass) {
        if (v.stormStarted) log.warn(`camera trigger ${det.camera}/${det.label}: detections over the rate limit; ignored until quiet`);
        continue;
      }
      const at = new Date(det.receivedAt).toISOString();
      submit(x.session, `${x.message}\n(camera ${det.camera}: ${det.label}, confidence ${det.confidence.toFixed(2)}${det.box ? `, box ${det.box.join(',')}` : ''}, at ${at})`, {
        trigger: { kind: 'camera', camera: det.camera, label: det.label, confidence: det.confidence, ...(det.box ? { box: det.box } : {}), ...(det.ts !== undefined ? { ts: det.ts } : {}) },
      });
    }
  };
}

// What the router records once a node ran a session command without error (commands/plan.ts
// decided the Effect): settings applied, savepoints tracked, settings restored by ROLLBACK TO or
// a rollback, a chained transaction; the node's backend then has the session's settings.
import type { Backend } from '../pool/backend.js';
import type { Session } from '../session/session.js';
import type { Effect } from './plan.js';

export function applyEffect(s: Session, effect: Effect, backend: Backend | undefined): void {
  switch (effect.kind) {
    case 'set':
      s.settings.apply(effect.analysis);
      if (effect.replay !== false) s.txn.replayed(effect.analysis.sql);
      break;
    case 'savepoint':
      s.txn.savepoint(effect.name, s.settings.save());
      s.txn.replayed(effect.sql);
      break;
    case 'release':
      s.txn.release(effect.name);
      s.txn.replayed(effect.sql);
      break;
    case 'rollback_to': {
      // The node undid the settings made since the savepoint; so does the router.
      const at = s.txn.rollbackTo(effect.name);
      if (at !== undefined) s.settings.restore(new Map(at.settings));
      s.txn.replayed(effect.sql);
      break;
    }
    case 'end': {
      const saved = s.txn.savedAtBegin;
      if (effect.rolledBack && saved !== undefined) s.settings.restore(new Map(saved));
      if (effect.chain) s.txn.chainedOnNode(s.settings.save());
      break;
    }
  }
  if (backend !== undefined && !backend.dead)
    backend.settingsKey =
      effect.kind === 'set' ? s.settings.keyAfter(effect.analysis) : s.settings.key();
}

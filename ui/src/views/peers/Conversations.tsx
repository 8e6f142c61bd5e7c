// The recent outbound conversations, each a Session with its transcript.

import { Ago } from '../../components/ui';
import { shortId } from '../../lib/format';
import { Link } from '../../router';
import type { PeerConversation } from './api';

export function Conversations(props: { conversations: PeerConversation[] }) {
  if (props.conversations.length === 0) return null;
  return (
    <section class="panel peer-conversations" aria-label="Recent conversations">
      <h2 class="panel-title">
        Recent conversations <span class="count">{props.conversations.length}</span>
      </h2>
      <table class="table" aria-label="Recent outbound conversations">
        <thead>
          <tr>
            <th>Peer</th>
            <th>Conversation</th>
            <th>Exchanges</th>
            <th>Last activity</th>
            <th>Transcript</th>
          </tr>
        </thead>
        <tbody>
          {props.conversations.map((c) => (
            <tr key={c.session_id} data-session-id={c.session_id}>
              <td class="strong">{c.peer}</td>
              <td data-label="Context" class="mono small" title={c.context_id}>
                {shortId(c.context_id)}
              </td>
              <td data-label="Exchanges">{c.exchanges}</td>
              <td>
                <Ago at={c.updated_at} />
              </td>
              <td>
                <Link href={`/sessions/${c.session_id}`} class="link" title="Open this conversation’s Session">
                  Session {shortId(c.session_id)} →
                </Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

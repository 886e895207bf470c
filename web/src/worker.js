// The package's Web Worker (browsers): the engine runs here, never on the page's thread.
import { loadEngine } from './engine.js';
import { serve } from './host.js';

serve({ post: (m, t) => self.postMessage(m, t), onMessage: (f) => (self.onmessage = ({ data }) => f(data)) }, { loadEngine });

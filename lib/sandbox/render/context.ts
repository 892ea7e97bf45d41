import type { SimState } from "../state/sim-state";

/** What a renderer needs: the state and the server's public URL (API and web share it). */
export interface RenderContext {
  state: SimState;
  baseUrl: string;
}

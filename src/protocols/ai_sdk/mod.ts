/**
 * The AI SDK UI add-on: `POST <base>/chat` takes what `useChat`'s `DefaultChatTransport` posts and
 * answers the run as the AI SDK UI message stream, on top of ordinary native runs (the chat id is
 * the session); `GET <base>/chat/{id}/stream` resumes the chat's running run for
 * `useChat({ resume: true })`. The wire shapes live in `schemas.ts`, the request's mapping onto a
 * native run request in `request.ts`, the event encoder in `encoder.ts` (a run's end in
 * `outcome.ts`); see docs/ai-sdk.md.
 */
export { aiSdkAddOn } from "./addon.ts";
export type { AiSdkSettings } from "./routes.ts";

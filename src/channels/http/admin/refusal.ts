// Bad input to an admin route: answered with its status and message, nothing changed. Its own
// class rather than server.ts's HttpError, so that this chunk takes nothing from the server module
// (every bundle module a chunk uses is registered in the bundle, which costs idle memory);
// routes.ts turns it into the response.
export class Refusal extends Error {
  constructor(readonly status: 400 | 404, message: string) {
    super(message);
    this.name = 'Refusal';
  }
}

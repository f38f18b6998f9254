import Foundation
import HybridInferenceCore

/// One model's bearer token: fetched when first needed, kept while fresh,
/// fetched again when it expires or the server refuses it.
///
/// Why an actor: requests run concurrently (sessions, hybrids and copies of
/// the model share it), and the fetch is asynchronous. The actor makes
/// "is there a token, is a fetch running" one decision, so that any number
/// of requests that find no token, or meet the same 401, await one fetch
/// (`inFlight`) instead of each calling the provider.
actor TokenCache {
  private let fetch: @Sendable () async throws -> BearerToken
  private var current: BearerToken?
  private var inFlight: Fetch?
  /// Numbers the fetches, so that one that ends late (its waiters gone, a
  /// newer fetch started) cannot clear the newer one's place.
  private var fetches = 0
  /// The tokens handed out, newest last, for redacting server messages that
  /// quote one; read synchronously by the error mapping, hence a lock
  /// (`Locked`) rather than actor state. At most `rememberedTokens`.
  nonisolated let issued = Locked<[APIKey]>([])
  static let rememberedTokens = 4
  /// Who this cache is, for keying what is remembered per credential
  /// (`RemoteAuthorizer.identity`): unique for good, where an
  /// `ObjectIdentifier` is reused by the next cache allocated at a freed
  /// one's address, which would inherit its remembered 429.
  nonisolated let id = UUID()

  /// The provider's call in progress and how many requests wait for it.
  private struct Fetch {
    let number: Int
    let task: Task<BearerToken, any Error>
    var waiters = 0
  }

  init(fetch: @escaping @Sendable () async throws -> BearerToken) {
    self.fetch = fetch
  }

  /// The token to send now; `timedOut` if none has come by `deadline`.
  func token(deadline: ContinuousClock.Instant, timedOut: HybridInferenceError) async throws -> BearerToken {
    if let current, current.isFresh(at: .now) { return current }
    return try await refreshed(deadline: deadline, timedOut: timedOut)
  }

  /// A token other than `rejected`, which the server refused: the one another
  /// request already fetched, while it is fresh, or a new one.
  func token(
    replacing rejected: BearerToken, deadline: ContinuousClock.Instant, timedOut: HybridInferenceError
  ) async throws -> BearerToken {
    if let current, current.secret != rejected.secret, current.isFresh(at: .now) { return current }
    current = nil
    return try await refreshed(deadline: deadline, timedOut: timedOut)
  }

  /// Waits for the fetch in progress, or starts one.
  ///
  /// A request that stops waiting (cancelled, or its deadline passed) leaves
  /// the fetch to the others; the last one to leave cancels it and clears
  /// its place, so that a provider that hangs is asked afresh by the next
  /// request instead of holding every later one until its deadline.
  private func refreshed(deadline: ContinuousClock.Instant, timedOut: HybridInferenceError) async throws
    -> BearerToken
  {
    var fetch = inFlight ?? started()
    fetch.waiters += 1
    inFlight = fetch
    let number = fetch.number
    do {
      // A value means the fetch has already run `finish`, which cleared
      // its place: only a waiter that gives up has anything to leave.
      return try await CancellableWait.value(of: fetch.task, deadline: deadline, timedOut: timedOut)
    } catch {
      leave(number)
      throw error
    }
  }

  /// A new call of the provider, not yet waited for.
  private func started() -> Fetch {
    fetches += 1
    let number = fetches
    let fetch = self.fetch
    let task = Task { [weak self] in
      do {
        let token = try await fetch()
        await self?.finish(number, .success(token))
        return token
      } catch {
        await self?.finish(number, .failure(error))
        throw error
      }
    }
    return Fetch(number: number, task: task)
  }

  /// One waiter of fetch `number` gave up on it; the last to give up
  /// cancels it. A fetch that has finished is no longer in flight, and
  /// there is nothing to leave.
  private func leave(_ number: Int) {
    guard var fetch = inFlight, fetch.number == number else { return }
    fetch.waiters -= 1
    inFlight = fetch
    guard fetch.waiters == 0 else { return }
    fetch.task.cancel()
    inFlight = nil
  }

  private func finish(_ number: Int, _ result: Result<BearerToken, any Error>) {
    if inFlight?.number == number { inFlight = nil }
    guard case .success(let token) = result else { return }
    current = token
    issued.withLock { tokens in
      tokens.append(token.secret)
      if tokens.count > Self.rememberedTokens { tokens.removeFirst(tokens.count - Self.rememberedTokens) }
    }
  }
}

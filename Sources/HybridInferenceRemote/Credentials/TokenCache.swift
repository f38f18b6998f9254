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
  private var inFlight: Task<BearerToken, any Error>?
  /// The tokens handed out, newest last, for redacting server messages that
  /// quote one; read synchronously by the error mapping, hence a lock
  /// (`Locked`) rather than actor state. At most `rememberedTokens`.
  nonisolated let issued = Locked<[APIKey]>([])
  static let rememberedTokens = 4

  init(fetch: @escaping @Sendable () async throws -> BearerToken) {
    self.fetch = fetch
  }

  /// The token to send now.
  func token() async throws -> BearerToken {
    if let current, current.isFresh(at: .now) { return current }
    return try await refreshed()
  }

  /// A token other than `rejected`, which the server refused: the one another
  /// request already fetched, or a new one.
  func token(replacing rejected: BearerToken) async throws -> BearerToken {
    if let current, current.secret != rejected.secret { return current }
    current = nil
    return try await refreshed()
  }

  private func refreshed() async throws -> BearerToken {
    let task: Task<BearerToken, any Error>
    if let inFlight {
      task = inFlight
    } else {
      let fetch = self.fetch
      task = Task { [weak self] in
        do {
          let token = try await fetch()
          await self?.finish(.success(token))
          return token
        } catch {
          await self?.finish(.failure(error))
          throw error
        }
      }
      inFlight = task
    }
    return try await CancellableWait.value(of: task)
  }

  private func finish(_ result: Result<BearerToken, any Error>) {
    inFlight = nil
    guard case .success(let token) = result else { return }
    current = token
    issued.withLock { tokens in
      tokens.append(token.secret)
      if tokens.count > Self.rememberedTokens { tokens.removeFirst(tokens.count - Self.rememberedTokens) }
    }
  }
}

/// Waits for a shared task's value, but stops waiting (with
/// `CancellationError`) as soon as the waiting task is cancelled.
///
/// `Task.value` ignores the waiter's cancellation; a shared fetch must not be
/// cancelled for one waiter (the others still need it), and a cancelled
/// request must still end promptly, even while a provider hangs.
enum CancellableWait {
  static func value<Value: Sendable>(of task: Task<Value, any Error>) async throws -> Value {
    let slot = Slot<Value>()
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        slot.install(continuation)
        Task { slot.resume(with: await task.result) }
      }
    } onCancel: {
      slot.resume(with: .failure(CancellationError()))
    }
  }

  /// The one continuation of a wait, resumed exactly once by whichever
  /// comes first: the value or the cancellation. Why a lock: the two race on
  /// different threads, and a continuation resumed twice is a crash.
  private final class Slot<Value: Sendable>: Sendable {
    private enum State: Sendable {
      case empty
      case waiting(CheckedContinuation<Value, any Error>)
      /// Ended before the continuation was installed (cancelled early).
      case ended(Result<Value, any Error>)
      case resumed
    }

    private let state = Locked<State>(.empty)

    func install(_ continuation: CheckedContinuation<Value, any Error>) {
      let early = state.withLock { state -> Result<Value, any Error>? in
        if case .ended(let result) = state {
          state = .resumed
          return result
        }
        state = .waiting(continuation)
        return nil
      }
      if let early { continuation.resume(with: early) }
    }

    func resume(with result: Result<Value, any Error>) {
      let continuation = state.withLock { state -> CheckedContinuation<Value, any Error>? in
        switch state {
        case .empty:
          state = .ended(result)
          return nil
        case .waiting(let continuation):
          state = .resumed
          return continuation
        case .ended, .resumed:
          return nil
        }
      }
      continuation?.resume(with: result)
    }
  }
}

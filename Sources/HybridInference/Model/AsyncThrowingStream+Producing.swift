extension AsyncThrowingStream where Failure == any Error, Element: Sendable {
  /// A stream fed by `produce`, which runs in a task of its own: it finishes
  /// when `produce` returns, throws what `produce` throws, and cancels the task
  /// when the consumer stops listening. Every streaming backend needs exactly
  /// this, so it is written once.
  static func producing(
    _ produce: @escaping @Sendable (Continuation) async throws -> Void
  ) -> AsyncThrowingStream {
    AsyncThrowingStream { continuation in
      let task = Task {
        do {
          try await produce(continuation)
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }
}

import Synchronization

/// Keeps the llama contexts of finished sessions for the next ones.
///
/// Creating a context allocates its KV cache and reserves llama.cpp's compute
/// graphs, which costs more than a short prompt's whole prefill. A server that
/// opens a session per request would pay that every time; with the pool, a new
/// session takes a warm context, and when its first prompt starts like the
/// cached one (the same instructions), that prefix is not decoded again.
final class ConversationPool: Sendable {
  /// How many idle contexts are kept; each holds a whole KV cache.
  static let capacity = 2

  private let idle = Mutex<[LlamaConversation]>([])

  /// An idle context made with these settings, or a new one.
  func checkOut(
    model: LlamaModel, contextSize: Int, batchSize: Int, threads: Int
  ) throws(HybridInferenceError) -> PooledConversation {
    let reused = idle.withLock { idle -> LlamaConversation? in
      guard
        let index = idle.firstIndex(where: {
          $0.model === model && $0.requestedContextSize == contextSize
            && $0.batchSize == batchSize && $0.threads == threads
        })
      else { return nil }
      return idle.remove(at: index)
    }
    if let reused { return PooledConversation(reused, pool: self) }
    let created = try LlamaConversation(
      model: model, contextSize: contextSize, batchSize: batchSize, threads: threads)
    return PooledConversation(created, pool: self)
  }

  fileprivate func giveBack(_ conversation: LlamaConversation) {
    idle.withLock { idle in
      idle.append(conversation)
      if idle.count > Self.capacity { idle.removeFirst() }
    }
  }
}

/// A session's hold on a pooled context: released with the session, it goes
/// back to the pool instead of being freed.
final class PooledConversation: Sendable {
  let conversation: LlamaConversation
  private let pool: ConversationPool

  fileprivate init(_ conversation: LlamaConversation, pool: ConversationPool) {
    self.conversation = conversation
    self.pool = pool
  }

  deinit {
    pool.giveBack(conversation)
  }
}

/// Storage that lives as long as one session, for backends to keep state
/// between turns (the on-device model keeps its llama context and KV cache here).
///
/// When the session is released, so is everything stored here. The lock only
/// guards the dictionary, and is never held while other code runs: `make`
/// runs outside it, so a `make` that uses the storage (another key, a
/// removal) works instead of deadlocking. The session sends one request at a
/// time, so a stored object is never used by two requests of the same
/// session at once.
public final class SessionStorage: Sendable {
  private let storage = Locked<[String: any AnyObject & Sendable]>([:])

  /// Empty storage; a session makes one for its lifetime.
  public init() {}

  /// The object stored under `key`, created by `make` on first use.
  ///
  /// `make` runs without the storage's lock held. If the key is filled while
  /// it runs (by `make` itself, or by another caller making the same key at
  /// once), the object already stored is returned and the one `make` built is
  /// dropped: every caller gets the same object. A `make` that throws stores
  /// nothing.
  public func value<Value: AnyObject & Sendable>(
    forKey key: String, orInsert make: () throws -> Value
  ) rethrows -> Value {
    if let existing = storage.withLock({ $0[key] as? Value }) { return existing }
    let created = try make()
    return storage.withLock { values in
      if let existing = values[key] as? Value { return existing }
      values[key] = created
      return created
    }
  }

  /// Drops the object stored under `key`, if any.
  public func removeValue(forKey key: String) {
    _ = storage.withLock { $0.removeValue(forKey: key) }
  }
}

import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// `SessionStorage.value(forKey:orInsert:)`: `make` runs outside the lock, so
/// a `make` that uses the storage itself cannot deadlock.
final class SessionStorageTests: XCTestCase {
  private struct Deadlocked: Error {}

  private final class Box: Sendable {
    let name: String
    init(_ name: String) { self.name = name }
  }

  func testMakeThatUsesTheStorage_returnsInsteadOfDeadlocking() throws {
    let storage = SessionStorage()
    let result = Locked<String?>(nil)
    try returnsInTime {
      let outer = storage.value(forKey: "outer") { () -> Box in
        let inner = storage.value(forKey: "inner") { Box("inner") }
        storage.removeValue(forKey: "absent")
        return Box("outer over \(inner.name)")
      }
      result.withLock { $0 = outer.name }
    }
    XCTAssertEqual(result.withLock { $0 }, "outer over inner")
    XCTAssertEqual(storage.value(forKey: "inner") { Box("again") }.name, "inner", "the inner value was kept")
  }

  func testWhenMakeRaces_theFirstValueInsertedWins() throws {
    let storage = SessionStorage()
    let result = Locked<String?>(nil)
    // `make` itself inserts the key first (as a concurrent caller could):
    // the value already there is returned, the one made later is dropped.
    try returnsInTime {
      let value = storage.value(forKey: "k") { () -> Box in
        _ = storage.value(forKey: "k") { Box("first") }
        return Box("second")
      }
      result.withLock { $0 = value.name }
    }
    XCTAssertEqual(result.withLock { $0 }, "first")
    XCTAssertEqual(storage.value(forKey: "k") { Box("third") }.name, "first")
  }

  /// Runs `body` on a thread of its own and fails unless it returns within
  /// 30 s: before the fix it never returned (NSLock is not recursive), and
  /// the suite must be able to report that and go on.
  private func returnsInTime(_ body: @escaping @Sendable () -> Void) throws {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      body()
      done.signal()
    }
    guard done.wait(timeout: .now() + 30) == .success else {
      XCTFail("value(forKey:orInsert:) deadlocked: make ran under the storage's lock")
      throw Deadlocked()
    }
  }

  func testMakeThatThrows_insertsNothing() {
    struct Refused: Error {}
    let storage = SessionStorage()
    XCTAssertThrowsError(try storage.value(forKey: "k") { () throws -> Box in throw Refused() })
    XCTAssertEqual(storage.value(forKey: "k") { Box("made") }.name, "made")
  }
}

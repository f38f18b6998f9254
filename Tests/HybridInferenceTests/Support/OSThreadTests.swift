import CLlama
import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama
@testable import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A thread the OS refuses ends the work that needed it with an error, at
/// once. Before `OSThread`, Foundation's `Thread.start()` dropped
/// `pthread_create`'s failure: the body never ran, and an HTTP exchange's
/// stream or a template render's continuation waited for ever. The refusal
/// here is real: a stack larger than the address space cannot be mapped.
/// The compute lanes (`LlamaThread`) start the same way.
final class OSThreadTests: XCTestCase {
  /// 128 TiB: past x86-64's and arm64's 47-48-bit user address space.
  private static let unmappable = 1 << 47

  func testAThread_runsItsBody() {
    let ran = DispatchSemaphore(value: 0)
    XCTAssertTrue(OSThread.start(stackSize: 256 << 10) { ran.signal() })
    XCTAssertEqual(ran.wait(timeout: .now() + 10), .success)
  }

  /// A named thread carries its name, cut to the 15 bytes Linux keeps,
  /// before its body runs: it shows in top, gdb and /proc.
  func testANamedThread_carriesItsName() throws {
    #if os(Linux)
      let name = Locked<String?>(nil)
      let ran = DispatchSemaphore(value: 0)
      XCTAssertTrue(
        OSThread.start(stackSize: 256 << 10, name: "hi-test-thread-named") {
          name.withLock { $0 = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) }
          ran.signal()
        })
      XCTAssertEqual(ran.wait(timeout: .now() + 10), .success)
      XCTAssertEqual(name.withLock { $0 }, "hi-test-thread-\n")
    #else
      throw XCTSkip("thread names are read from /proc")
    #endif
  }

  func testARefusedThread_saysSo_andReleasesItsBody() {
    final class Witness: Sendable {}
    weak var witness: Witness?
    let started: Bool = {
      let held = Witness()
      witness = held
      return OSThread.start(stackSize: Self.unmappable) { _ = held }
    }()
    XCTAssertFalse(started)
    XCTAssertNil(witness, "the body was released, not leaked")
  }

  func testAnHTTPExchangeWhoseThreadIsRefused_endsAtOnce() async throws {
    let client = HTTP1Client(maximumConnectionsPerHost: 4, redirectPolicy: .never, stackBytes: Self.unmappable)
    let request = URLRequest(url: try XCTUnwrap(URL(string: "http://127.0.0.1:9/")))
    let outcome = try await Self.within(.seconds(10)) {
      let exchange = client.exchange(request, connectTimeout: .seconds(30), deadline: .now + .seconds(60))
      do {
        for try await _ in exchange.events {}
        return "no error"
      } catch {
        return "\((error as? URLError)?.code.rawValue ?? 0)"
      }
    }
    XCTAssertEqual(outcome, "\(URLError.Code.resourceUnavailable.rawValue)")
  }

  func testATemplateRenderWhoseThreadIsRefused_failsTyped() async throws {
    let outcome = try await Self.within(.seconds(10)) {
      do {
        _ = try await TemplateThread.run(stackSize: Self.unmappable) { _ in 1 }
        return "rendered"
      } catch HybridInferenceError.generationFailed(let why) {
        return why
      } catch {
        return "\(error)"
      }
    }
    XCTAssertEqual(outcome, TemplateThread.refused)
  }

  func testComputeWhoseLaneIsRefused_failsTyped_andRunsNothing() async throws {
    let lanes = ComputeLanes(stackSize: Self.unmappable)
    let ran = Locked(false)
    let outcome = try await Self.within(.seconds(10)) {
      do {
        try await ComputeLane.run(threads: 1, on: lanes) { ran.withLock { $0 = true } }
        return "ran"
      } catch {
        return "\(error)"
      }
    }
    XCTAssertEqual(outcome, "\(HybridInferenceError.generationFailed(LlamaThread.refused))")
    XCTAssertFalse(ran.withLock { $0 })
    XCTAssertEqual(lanes.count, 0, "no lane was kept for a thread that never ran")
    XCTAssertEqual(ComputeBudget.shared.freeCores, ComputeBudget.shared.cores, "the cores were given back")
  }

  /// A scheduler whose lane is refused fails the turn it was started for,
  /// and the next submission tries again (and fails again) instead of
  /// queueing behind a scheduler that never ran.
  func testAGenerationWhoseLaneIsRefused_failsTyped_andTheNextOneToo() async throws {
    let model = try await LocalTestModels.tiny().loadedModel(progress: nil)
    let decision = AttentionChoice.Decision(type: LLAMA_FLASH_ATTN_TYPE_DISABLED, reason: "off (test)")
    let context = BatchedContext(
      model: model,
      settings: .init(contextSize: 512, batchSize: 64, threads: 1, sequences: 1, flashAttention: decision),
      lanes: ComputeLanes(stackSize: Self.unmappable))
    final class Owner: Sendable {}
    let owner = Owner()
    let request = GenerationRequest(
      prompt: [1, 2, 3], shareableTokens: 0, owner: ObjectIdentifier(owner), maximumResponseTokens: 4,
      sampler: { throw CancellationError() }, onText: { _ in })
    for attempt in 1...2 {
      let outcome = try await Self.within(.seconds(10)) {
        do {
          _ = try await context.submit(request)
          return "answered"
        } catch {
          return "\(error)"
        }
      }
      XCTAssertEqual(outcome, "\(HybridInferenceError.generationFailed(LlamaThread.refused))", "attempt \(attempt)")
      XCTAssertTrue(context.isIdle, "attempt \(attempt): no scheduler is marked running")
    }
    withExtendedLifetime(owner) {}
  }

  /// `body`'s result, or a failure once `limit` passes: the work runs in a
  /// task of its own that this does not wait for, since without the fix
  /// it never ends, cancelled or not.
  private static func within(
    _ limit: Duration, _ body: @escaping @Sendable () async -> String
  ) async throws -> String {
    let result = Locked<String?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
      let value = await body()
      result.withLock { $0 = value }
      done.signal()
    }
    let waited = await Task.detached {
      done.wait(timeout: .now() + .milliseconds(Int(limit.components.seconds * 1000)))
    }
    .value
    guard waited == .success, let value = result.withLock({ $0 }) else { throw StillWaiting(limit: limit) }
    return value
  }

  /// The work had not ended within its limit: the thread's refusal was lost.
  private struct StillWaiting: Error, CustomStringConvertible {
    let limit: Duration
    var description: String { "still waiting after \(limit): the refusal never reached the caller" }
  }
}

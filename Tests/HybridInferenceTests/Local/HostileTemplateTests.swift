import Foundation
import TestPrerequisites
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Chat templates written to end or freeze the host (issue 19): arithmetic
/// traps, unbounded recursion, allocation and time bombs. They come from
/// scripts/make-hostile-templates.py, as .jinja files and inside tiny GGUFs.
///
/// Each must end in a typed template error (so the prompt falls back to
/// llama.cpp's matcher), or render as jinja2 renders it, within a second and
/// 100 MB, the process alive. Through the public API each runs in a child
/// process (`ChildProcess`: this test binary again, on the same test),
/// watched for 60 s and 3 GiB as an app's supervisor would; before the fix
/// 12 of the 13 kinds of the issue killed or froze the child.
final class HostileTemplateTests: XCTestCase {
  /// Each kind and what it gets now: the error kind and a fragment of its message.
  private static let expected: [String: (kind: JinjaError.Kind, fragment: String)] = [
    "power-overflow": (.runtime, "integer overflow in **"),
    "floor-division-overflow": (.runtime, "integer overflow in //"),
    "unary-minus-overflow": (.runtime, "integer overflow in unary -"),
    "percent-format-overflow": (.runtime, "is not a 64-bit integer"),
    "string-method-negative-index": (.runtime, "format: missing argument"),
    "self-recursive-macro": (.limit, "macro 'turn' called more than 64 deep"),
    "deep-expression-nesting": (.limit, "nested more than 100 deep"),
    "deep-block-nesting": (.limit, "nested more than 100 deep"),
    "repeat-bomb": (.limit, "bytes allocated"),
    "doubling-loop": (.limit, "bytes allocated"),
    "huge-range": (.runtime, "range too big"),
    "nested-loops": (.limit, "loop iterations"),
    "namespace-chain": (.limit, "a value nested deeper than 128"),
    "shared-value-repr": (.limit, "steps"),
    "int-filter-infinity": (.runtime, "is not a 64-bit integer"),
  ]
  /// The one kind jinja2 renders (a namespace that holds itself prints as
  /// `<Namespace {...}>`): it must render the same.
  private static let rendered = [
    "self-containing-namespace":
      "<|im_start|>user\nHello<Namespace {'turns': 0, 'self': <Namespace {...}>}><|im_end|>\n<|im_start|>assistant\n"
  ]

  private static var variables: [String: JinjaValue] {
    [
      "messages": .array([.dict(JinjaDict([("role", .string("user")), ("content", .string("Hello"))]))]),
      "add_generation_prompt": .bool(true),
    ]
  }

  /// A hostile template ends within a second; under a sanitizer (`make
  /// sanitize` sets HYBRID_SANITIZER), whose instrumentation slows the
  /// engine several times over, within ten.
  static let secondsAllowed: Double = ProcessInfo.processInfo.environment["HYBRID_SANITIZER"] == nil ? 1 : 10

  func testEveryHostileKind_inTheEngine_endsInATypedErrorOrJinja2sOutput() throws {
    let hostile = try GeneratedFiles.hostileTemplates.get()
    XCTAssertEqual(Set(hostile.kinds), Set(Self.expected.keys).union(Self.rendered.keys))
    for kind in hostile.kinds {
      let source = try String(contentsOfFile: hostile.directory + "/\(kind).jinja", encoding: .utf8)
      let start = ContinuousClock.now
      let result = Result { () throws(JinjaError) in try JinjaTemplate(source).render(Self.variables) }
      let elapsed = ContinuousClock.now - start
      XCTAssertLessThan(elapsed, .seconds(Self.secondsAllowed), "\(kind) took \(elapsed)")
      print("hostile template \(kind): \(elapsed), \(result)")
      switch (result, Self.expected[kind], Self.rendered[kind]) {
      case (.failure(let error), let want?, _):
        XCTAssertEqual(error.kind, want.kind, "\(kind): \(error)")
        XCTAssertTrue(error.message.contains(want.fragment), "\(kind): \(error)")
      case (.success(let output), _, let want?):
        XCTAssertEqual(output, want, kind)
      case (.success(let output), _, _):
        XCTFail("\(kind) rendered: \(output.prefix(200))")
      case (.failure(let error), _, _):
        XCTFail("\(kind) failed where jinja2 renders: \(error)")
      }
    }
  }

  func testEveryHostileKind_throughThePublicAPI_endsInTheFallbackWithinASecondAndUnder100MB() async throws {
    if ChildProcess.isChild(of: self) { return try await HostileChild.scenario() }
    _ = try LocalTestModels.require(LocalTestModels.defaultPath)
    let hostile = try GeneratedFiles.hostileTemplates.get()
    for kind in hostile.kinds {
      let outcome = try HostileChild.run(self, model: hostile.directory + "/\(kind).gguf")
      guard case .finished(let report) = outcome else {
        XCTFail("\(kind): \(outcome)")
        continue
      }
      print("hostile model \(kind): \(report)")
      let wanted = Self.rendered[kind] == nil ? "fallback" : "template"
      XCTAssertEqual(report["outcome"], wanted, "\(kind): \(report)")
      XCTAssertLessThan(Double(report["seconds"] ?? "") ?? .infinity, Self.secondsAllowed, "\(kind): \(report)")
      XCTAssertLessThan(Double(report["extraMiB"] ?? "") ?? .infinity, 100, "\(kind): \(report)")
    }
  }
  /// A request cancelled while its template runs (nested loops, which take
  /// a few hundred milliseconds to pass their budget) ends at once with
  /// `CancellationError`, and the render itself stops: one that ran on to
  /// its budget would fall back and log why, and none does.
  func testCancelledRequest_stopsItsTemplatesRender() async throws {
    _ = try LocalTestModels.require(LocalTestModels.defaultPath)
    let hostile = try GeneratedFiles.hostileTemplates.get()
    let model = LocalSystemModel(
      modelPath: hostile.directory + "/nested-loops.gguf", contextSize: 512, threads: 1)
    try await model.prepare()
    let messages = Locked<[String]>([])
    let session = GenerativeModelSession(
      model: model, logHandler: LogHandler { record in messages.withLock { $0.append(record.message) } })
    XCTAssertEqual(Self.templateThreads(), 0)
    let request = Task { try await session.respond(to: "Hello") }
    try await waitUntil { Self.templateThreads() == 1 }  // the render has started
    let cancelled = ContinuousClock.now
    request.cancel()
    let result = await request.result
    let waited = ContinuousClock.now - cancelled
    guard case .failure(let error) = result, error is CancellationError else {
      return XCTFail("the cancelled request ended with \(result)")
    }
    XCTAssertLessThan(waited, .milliseconds(500), "a hang guard")
    // The session's wait ends at once; the render's own thread is what must
    // stop. Uncancelled it passes its budget within a second, logs why and
    // only then ends.
    try await waitUntil { Self.templateThreads() == 0 }
    let fallbacks = messages.withLock { $0.filter { $0.contains("chat template could not be used") } }
    XCTAssertEqual(fallbacks, [], "the render ran on to its budget")
  }

  /// How many `TemplateThread` threads this process runs now.
  private static func templateThreads() -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter { task in
      let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
      return name == TemplateThread.name + "\n"
    }.count
  }
}

/// One hostile model in a child process under a watchdog.
enum HostileChild {
  enum Outcome: CustomStringConvertible {
    case finished([String: String])
    case killed(String)
    var description: String {
      switch self {
      case .finished(let report): "finished \(report)"
      case .killed(let why): why
      }
    }
  }

  /// The child's half: loads the model, asks one question through a
  /// session, and prints how it ended, how long the request took and how far
  /// the process's peak memory rose above what it held before.
  static func scenario() async throws {
    let path = try XCTUnwrap(ProcessInfo.processInfo.environment["HYBRID_HOSTILE_MODEL"])
    let model = LocalSystemModel(modelPath: path, contextSize: 512, threads: 1)
    try await model.prepare()
    // Linux resets the peak (VmHWM) to the current size when 5 is written here.
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    let before = HostileChild.memory("VmRSS")
    let messages = Locked<[String]>([])
    let session = GenerativeModelSession(
      model: model, logHandler: LogHandler { record in messages.withLock { $0.append(record.message) } })
    let start = ContinuousClock.now
    var outcome: String
    do {
      _ = try await session.respond(
        to: "Hello",
        options: .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: 1)))
      let fellBack = messages.withLock { $0.contains { $0.contains("the model's chat template could not be used") } }
      outcome = fellBack ? "fallback" : "template"
    } catch let error as HybridInferenceError {
      outcome = "error(\(error))".replacingOccurrences(of: " ", with: "_")
    }
    let elapsed = ContinuousClock.now - start
    let extra = Double(HostileChild.memory("VmHWM") - before) / 1_048_576
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print("HOSTILE-RESULT outcome=\(outcome) seconds=\(seconds) extraMiB=\(extra)")
  }

  static let timeLimit: Duration = .seconds(60)
  static let memoryLimit = 3 << 30

  /// Runs `test`'s child on `model`, killing it past the time or memory limit.
  static func run(_ test: XCTestCase, model: String) throws -> Outcome {
    let (child, output) = try ChildProcess.start(test, environment: ["HYBRID_HOSTILE_MODEL": model])
    let log = Locked(Data())
    output.fileHandleForReading.readabilityHandler = { handle in
      let data = handle.availableData
      log.withLock { $0.append(data) }
    }
    let start = ContinuousClock.now
    var killed: String?
    while child.isRunning {
      let resident = memory("VmRSS", pid: child.processIdentifier)
      if resident > memoryLimit {
        killed = "killed by the watchdog at \(resident >> 20) MiB"
      } else if ContinuousClock.now - start > timeLimit {
        killed = "killed by the watchdog after \(timeLimit)"
      }
      if killed != nil {
        child.terminate()
        kill(child.processIdentifier, SIGKILL)
        break
      }
      usleep(20_000)
    }
    child.waitUntilExit()
    output.fileHandleForReading.readabilityHandler = nil
    let text = String(decoding: log.withLock { $0 } + output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    if let killed { return .killed(killed) }
    guard child.terminationReason == .exit, child.terminationStatus == 0 else {
      return .killed(
        "the child died (\(child.terminationReason == .exit ? "exit" : "signal") \(child.terminationStatus)): \(text.suffix(1500))"
      )
    }
    guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("HOSTILE-RESULT ") }) else {
      return .killed("no result: \(text.suffix(1500))")
    }
    var report: [String: String] = [:]
    for field in line.split(separator: " ").dropFirst() {
      let parts = field.split(separator: "=", maxSplits: 1)
      if parts.count == 2 { report[String(parts[0])] = String(parts[1]) }
    }
    return .finished(report)
  }

  /// A size line of /proc/<pid>/status (`VmRSS`, `VmHWM`), in bytes; 0 when unreadable.
  static func memory(_ field: String, pid: Int32? = nil) -> Int {
    let path = "/proc/\(pid.map(String.init) ?? "self")/status"
    guard let status = try? String(contentsOfFile: path, encoding: .utf8),
      let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
    else { return 0 }
    let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    return kilobytes * 1024
  }
}

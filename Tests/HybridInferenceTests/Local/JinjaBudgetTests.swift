import Foundation
import Synchronization
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The render budget (`JinjaBudget`): real templates stay far below it,
/// arithmetic is Python's or a typed error, a cancelled render stops, and
/// renders leave nothing behind.
final class JinjaBudgetTests: XCTestCase {
  private static let fixtures = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/chat-templates")

  /// Every reference template × conversation, and a 50-turn conversation on
  /// each, spends under a 90th of each default step, byte and iteration
  /// limit, and under a quarter of each depth (the margins the defaults'
  /// doc comment gives).
  func testReferenceTemplates_stayFarBelowTheDefaultBudget() throws {
    let conversations = try OrderedJSON.parse(
      Data(contentsOf: Self.fixtures.appendingPathComponent("conversations.json")))
    guard case .array(var corpus) = conversations else { return XCTFail("conversations.json is not a list") }
    corpus.append(Self.longConversation(turns: 50))
    let names = try FileManager.default.contentsOfDirectory(atPath: Self.fixtures.path + "/templates").sorted()
    var most = (steps: 0, allocated: 0, written: 0, iterations: 0, depth: 0, macroDepth: 0)
    var rendered = 0
    for name in names {
      let source = try String(contentsOf: Self.fixtures.appendingPathComponent("templates/\(name)"), encoding: .utf8)
      guard let template = try? JinjaTemplate(source) else { continue }
      for conversation in corpus {
        guard case .dict(let fields) = conversation else { continue }
        let variables: [String: JinjaValue] = [
          "messages": fields["messages"] ?? .array([]), "tools": fields["tools"] ?? .none,
          "add_generation_prompt": .bool(true), "bos_token": .string("<s>"), "eos_token": .string("</s>"),
        ]
        let limits = JinjaBudget.Limits(for: variables)
        let budget = JinjaBudget(limits)
        guard (try? template.render(variables, budget: budget)) != nil else { continue }
        rendered += 1
        XCTAssertLessThan(budget.steps, limits.steps / 90, "\(name): \(budget.steps) steps")
        XCTAssertLessThan(budget.allocated, limits.allocatedBytes / 90, "\(name): \(budget.allocated) bytes")
        XCTAssertLessThan(budget.written, limits.outputBytes / 90, name)
        XCTAssertLessThan(budget.iterations, limits.loopIterations / 90, name)
        most.steps = max(most.steps, budget.steps)
        most.allocated = max(most.allocated, budget.allocated)
        most.written = max(most.written, budget.written)
        most.iterations = max(most.iterations, budget.iterations)
        most.depth = max(most.depth, budget.deepest)
        most.macroDepth = max(most.macroDepth, budget.deepestMacro)
      }
    }
    print("jinja budget: \(rendered) renders, most spent: \(most)")
    XCTAssertGreaterThan(rendered, 500)
    XCTAssertLessThan(most.depth, JinjaBudget.Limits(inputBytes: 0, items: 0).depth / 4)
    XCTAssertLessThan(most.macroDepth, JinjaBudget.Limits(inputBytes: 0, items: 0).macroDepth / 4)
  }

  /// `turns` messages, user and assistant alternating, of ordinary length.
  private static func longConversation(turns: Int) -> JinjaValue {
    let messages = (0..<turns).map { turn in
      JinjaValue.dict(
        JinjaDict([
          ("role", .string(turn.isMultiple(of: 2) ? "user" : "assistant")),
          ("content", .string("Message \(turn): a sentence of ordinary length, to stand for a real turn of a chat.")),
        ]))
    }
    return .dict(JinjaDict([("name", .string("50 turns")), ("messages", .array(messages))]))
  }

  /// Python's integer semantics where they fit in 64 bits (floor division,
  /// modulo's sign, exact powers), a typed error where they do not, and
  /// ranges and slices with extreme steps made without overflowing.
  func testArithmetic_isPythonsOrATypedError() throws {
    let cases: [(String, String?)] = [
      ("{{ 7 // -2 }} {{ -7 // 2 }} {{ 7 % -2 }} {{ -7 % 2 }}", "-4 -4 -1 1"),
      (
        "{{ (-9223372036854775807 - 1) % -1 }} {{ 2 ** 62 }} {{ (-2) ** 63 }} {{ 2 ** -1 }}",
        "0 4611686018427387904 -9223372036854775808 0.5"
      ),
      ("{{ range(5, 0, -2) | list }} {{ range(100000) | length }}", "[5, 3, 1] 100000"),
      ("{{ 'abc'[::-9223372036854775807] }} {{ 'abcdef'[1:5:9223372036854775807] }}", "c b"),
      ("{{ [1, 2, 3] | batch(9223372036854775807) | list }}", "[[1, 2, 3]]"),
      ("{{ '%d %d' % (3.9, -3.9) }} {{ (-9223372036854775807 - 1) is divisibleby(-1) }}", "3 -3 True"),
      ("{{ 9223372036854775807 + 1 }}", nil),
      ("{{ (-9223372036854775807 - 1) * -1 }}", nil),
      ("{{ range(100001) | length }}", nil),
      ("{{ 1.5 // 0 }}", nil),
      ("{{ (-9223372036854775807 - 1) | abs }}", nil),
    ]
    // A literal wider than 64 bits was read as 0; it is refused now.
    XCTAssertThrowsError(try JinjaTemplate("{{ 99999999999999999999 }}").render([:]))
    // A negative width must not buy back room in the budget: the bomb after it still fails.
    let refund = "{{ 'x' | indent(-9223372036854775807) }}{% set s = 'a' * 40000000 %}{{ s | length }}"
    do throws(JinjaError) {
      _ = try JinjaTemplate(refund).render([:])
      XCTFail("a 40 MB string after a negative indent rendered")
    } catch {
      XCTAssertEqual(error.kind, .limit, "\(error)")
    }
    for (source, want) in cases {
      let result = Result { () throws(JinjaError) in try JinjaTemplate(source).render([:]) }
      switch (result, want) {
      case (.success(let output), let want?): XCTAssertEqual(output, want, source)
      case (.failure(let error), nil): XCTAssertEqual(error.kind, .runtime, "\(source): \(error)")
      default: XCTFail("\(source): \(result)")
      }
    }
  }

  /// A render whose request is cancelled stops at its next check: the
  /// waiting task gets `CancellationError` promptly, and it gets it only
  /// once the thread has left the render (`TemplateThread.run` waits for the
  /// body), which saw `.cancelled` long before its loops could end.
  func testCancelledRender_stopsTheRenderItself() async throws {
    let template = try JinjaTemplate(
      "{% for i in range(100000) %}{% for j in range(100000) %}{{ '' }}{% endfor %}{% endfor %}")
    let unlimited = JinjaBudget.Limits(
      steps: .max, outputBytes: .max, allocatedBytes: .max, loopIterations: .max, depth: 400, macroDepth: 64,
      valueDepth: 128)
    let started = Atomic<Bool>(false)
    let ended = Locked<(kind: JinjaError.Kind?, steps: Int)?>(nil)
    let task = Task {
      try await TemplateThread.run { cancellation in
        let budget = JinjaBudget(unlimited, cancellation: cancellation)
        started.store(true, ordering: .relaxed)
        do throws(JinjaError) {
          _ = try template.render([:], budget: budget)
          ended.withLock { $0 = (nil, budget.steps) }
        } catch {
          ended.withLock { $0 = (error.kind, budget.steps) }
        }
      }
    }
    while !started.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
    try await Task.sleep(for: .milliseconds(100))
    let cancelled = ContinuousClock.now
    task.cancel()
    let result = await task.result
    let waited = ContinuousClock.now - cancelled
    guard case .failure(let error) = result, error is CancellationError else {
      return XCTFail("the cancelled task ended with \(result)")
    }
    XCTAssertLessThan(waited, .seconds(2), "a hang guard: the check runs every 1,024 steps")
    let spent = try XCTUnwrap(ended.withLock { $0 }, "the render had not ended when the task did")
    XCTAssertEqual(spent.kind, .cancelled)
    // 10^10 iterations uncancelled; a few hundred thousand steps in 100 ms.
    XCTAssertLessThan(spent.steps, 1_000_000_000)
  }

  /// 5,000 renders of a template with a macro, each with messages of its own,
  /// leave the resident size flat: the scope a macro's closure holds is
  /// emptied when the render ends (before, each render's scope and its
  /// messages, 8 KB here, stayed in memory for good).
  func testRendersOfAMacroTemplate_leaveMemoryFlat() throws {
    let template = try JinjaTemplate(
      "{% macro line(m) %}{{ m.role }}: {{ m.content | length }}\n{% endmacro %}"
        + "{% set ns = namespace(count=0) %}{% set ns.self = ns %}"
        + "{% for m in messages %}{{ line(m) }}{% set ns.count = ns.count + 1 %}{% endfor %}")
    func render(_ index: Int) throws {
      let body = String(repeating: "\(index % 10)", count: 8_192)
      let message = JinjaValue.dict(JinjaDict([("role", .string("user")), ("content", .string(body))]))
      XCTAssertEqual(try template.render(["messages": .array([message])]), "user: 8192\n")
    }
    for index in 0..<500 { try render(index) }
    let before = HostileChild.memory("VmRSS")
    for index in 500..<5_000 { try render(index) }
    let after = HostileChild.memory("VmRSS")
    print("jinja renders: resident \(before >> 10) KiB after 500 renders, \(after >> 10) KiB after 5,000")
    // Under a sanitizer (`make sanitize` sets HYBRID_SANITIZER) RSS measures the
    // sanitizer: AddressSanitizer keeps freed memory in a 256 MiB quarantine.
    if ProcessInfo.processInfo.environment["HYBRID_SANITIZER"] == nil {
      XCTAssertLessThan(after - before, 8 << 20, "4,500 renders kept \((after - before) >> 10) KiB")
    }
  }
}

import CLlama
import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The prompt cache on disk: a second process reuses the first one's states
/// with the same answers, each turn's state replaces its prefix's, files are
/// 0600, evicted past the limit and emptied by `removeAll`, and a damaged,
/// truncated, foreign, mismatched or forged file is ignored and logged.
final class PromptCacheTests: XCTestCase {
  private let greedy = HybridGenerationOptions.foundationModels(
    GenerationOptions(sampling: .greedy, maximumResponseTokens: 8))
  private let instructions =
    "You are a careful assistant. You answer questions about the weather, in one short sentence, without any greeting."

  private var directory: URL!

  override func setUp() {
    directory = URL(fileURLWithPath: NSTemporaryDirectory())
      .appendingPathComponent("prompt-cache-tests-\(getpid())-\(UUID().uuidString)")
  }

  override func tearDown() {
    try? FileManager.default.removeItem(at: directory)
  }

  /// The tiny model, or SmolLM2 where `HYBRID_TEST_CACHE_MODEL` says `default`.
  private func model(_ cache: PromptCache?) throws -> LocalSystemModel {
    if ProcessInfo.processInfo.environment["HYBRID_TEST_CACHE_MODEL"] == "default" {
      return LocalSystemModel(
        modelPath: try LocalTestModels.require(LocalTestModels.defaultPath), contextSize: 1024, promptCache: cache)
    }
    return LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyPath), contextSize: 512, threads: 2,
      promptCache: cache)
  }

  /// One turn on `transcript`: the answer, the tokens that were not decoded, and the log.
  private func answer(
    _ transcript: Transcript, on model: LocalSystemModel
  ) async throws -> (text: String, cached: Int, log: [String]) {
    try await Self.answer(transcript, on: model, options: greedy)
  }

  /// Streams `transcript` on `model`: the text, the tokens that came from a
  /// cache, and the log. PromptCacheDamageTests asks with it too.
  static func answer(
    _ transcript: Transcript, on model: LocalSystemModel, options: HybridGenerationOptions
  ) async throws -> (text: String, cached: Int, log: [String]) {
    let log = Locked<[String]>([])
    let request = ModelRequest(
      transcript: transcript, options: options,
      logHandler: LogHandler { record in log.withLock { $0.append(record.message) } })
    var text = ""
    var cached = -1
    for try await delta in model.streamResponse(to: request) {
      text += delta.text
      if let usage = delta.usageMetadata { cached = usage.cachedContentTokenCount ?? -1 }
    }
    return (text, cached, log.withLock { $0 })
  }

  private func conversation(turns: Int, _ answers: [String] = []) -> Transcript {
    var transcript = Transcript(instructions: instructions)
    for turn in 0..<turns {
      transcript.entries.append(.prompt("Question \(turn): is it sunny in city number \(turn * 7)?"))
      if turn < answers.count { transcript.entries.append(.response(Content(text: answers[turn]), modelVersion: "x")) }
    }
    return transcript
  }

  private var stateFiles: [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".kv") }
      .sorted()
  }

  // MARK: Checksum

  func testChecksum_isXXH64() {
    XCTAssertEqual(Checksum64.of([UInt8]()), 0xEF46_DB37_51D8_E999)
    XCTAssertEqual(Checksum64.of(Array("abc".utf8)), 0x44BC_2CF5_AD77_0999)
    XCTAssertEqual(Checksum64.of(Array("Nobody inspects the spammish repetition".utf8)), 0xFBCE_A83C_8A37_8BF1)
  }

  // MARK: Another process

  /// The parent saves turn 1; a child process answers turn 2 of the same
  /// conversation from the cache, and checks the answer against a model without one.
  func testSecondProcess_reusesTheFirstProcessCache() async throws {
    try await secondProcess(model: "tiny")
  }

  /// The same on SmolLM2, whose greedy answer is text, not random tokens.
  func testSecondProcess_onTheDefaultModel_givesTheSameAnswer() async throws {
    try await secondProcess(model: "default")
  }

  /// In the parent, turn 1 with the cache; in the child, turn 2 of the same
  /// conversation with the cache and without.
  private func secondProcess(model name: String) async throws {
    setenv("HYBRID_TEST_CACHE_MODEL", name, 1)
    defer { unsetenv("HYBRID_TEST_CACHE_MODEL") }
    var first = ""
    if !ChildProcess.isChild(of: self) {
      first = try await answer(conversation(turns: 1), on: try model(.directory(directory))).text
      XCTAssertFalse(stateFiles.isEmpty, "turn 1's state is on disk when the stream ends")
    }
    try await ChildProcess.assertPasses(
      self, environment: ["HYBRID_TEST_CACHE_DIRECTORY": directory.path, "HYBRID_TEST_FIRST_ANSWER": first]
    ) {
      let environment = ProcessInfo.processInfo.environment
      let path = try XCTUnwrap(environment["HYBRID_TEST_CACHE_DIRECTORY"])
      let restored = conversation(turns: 2, [try XCTUnwrap(environment["HYBRID_TEST_FIRST_ANSWER"])])
      let cached = try await answer(restored, on: try model(.directory(URL(fileURLWithPath: path))))
      let plain = try await answer(restored, on: try model(nil))
      XCTAssertGreaterThan(cached.cached, 20, "turn 1's prompt comes from the parent's file: \(cached.log)")
      XCTAssertEqual(plain.cached, 0)
      XCTAssertEqual(cached.text, plain.text, "greedy answers are the same with the cache and without")
    }
  }

  // MARK: Streams

  /// States saved by a context grown to four sequences (saved from sequence
  /// 1 of 4 streams) load into a context of one, and back.
  func testStatesMoveBetweenContextsOfDifferentSequenceCounts() async throws {
    let cache = PromptCache.directory(directory)
    let grown = try model(cache)
    let questions = (0..<3).map { conversation(turns: 1, []).entries[0].content.text + " Variant \($0)." }
    let (instructions, options) = (instructions, greedy)
    let answers = try await withThrowingTaskGroup(of: (Int, String).self) { group in
      for (index, question) in questions.enumerated() {
        group.addTask {
          var transcript = Transcript(instructions: instructions)
          transcript.entries = [.prompt(question)]
          return (index, try await PromptCacheTests.answer(transcript, on: grown, options: options).text)
        }
      }
      return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
    }
    XCTAssertGreaterThan(grown.batchedContext?.sequenceCount ?? 0, 1, "the context grew")
    for (index, question) in questions.enumerated() {
      var transcript = Transcript(instructions: instructions)
      transcript.entries = [.prompt(question), .response(Content(text: answers[index] ?? ""), modelVersion: "x")]
      transcript.entries.append(.prompt("And tomorrow?"))
      let restored = try await answer(transcript, on: try model(cache))  // a new context, one sequence
      let plain = try await answer(transcript, on: try model(nil))
      XCTAssertGreaterThan(restored.cached, 30, "question \(index): \(restored.log)")
      XCTAssertEqual(restored.text, plain.text, "question \(index)")
    }
  }

  // MARK: Processes sharing the directory

  /// A write waits for the directory's lock: while another holder keeps it,
  /// the state stays a temp file and `respond` does not return.
  func testAWrite_waitsForTheDirectorysLock() async throws {
    let cache = PromptCache.directory(directory)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let lock = open(directory.path + "/.lock", O_RDWR | O_CREAT, 0o600)
    XCTAssertGreaterThanOrEqual(lock, 0)
    XCTAssertEqual(flock(lock, LOCK_SH), 0)  // as a reading process would; a load still goes ahead
    let model = try model(cache)
    let transcript = conversation(turns: 1)
    let options = greedy
    let returned = Locked(false)
    let turn = Task {
      defer { returned.withLock { $0 = true } }
      return try await PromptCacheTests.answer(transcript, on: model, options: options)
    }
    let path = directory.path
    try await waitUntil {
      ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).contains { $0.hasSuffix(".kvtmp") }
    }
    XCTAssertEqual(stateFiles, [], "nothing is placed while the lock is held")
    XCTAssertFalse(returned.withLock { $0 }, "and the turn has not returned")
    close(lock)
    let reply = try await turn.value
    XCTAssertEqual(stateFiles.count, 2, "placed once the lock was free")
    XCTAssertFalse(reply.text.isEmpty && reply.cached < 0)
  }

  // MARK: Shareable openings

  func testSameInstructionsInAnotherContext_skipTheirPrefill() async throws {
    let cache = PromptCache.directory(directory)
    _ = try await answer(conversation(turns: 1), on: try model(cache))
    XCTAssertEqual(stateFiles.filter { $0.hasSuffix("s.kv") }.count, 1, "the instructions are saved on their own")
    var other = Transcript(instructions: instructions)
    other.entries = [.prompt("Something else entirely: will it snow tomorrow?")]
    let reply = try await answer(other, on: try model(cache))
    let plain = try await answer(other, on: try model(nil))
    XCTAssertGreaterThan(reply.cached, 20, "the instructions come from disk")
    XCTAssertEqual(reply.text, plain.text)
  }

  // MARK: Files

  func testEachTurnsState_replacesThePrefixItExtends() async throws {
    let cache = PromptCache.directory(directory)
    let model = try model(cache)
    let session = GenerativeModelSession(model: model, instructions: instructions, logHandler: .silent)
    var usages: [Int] = []
    for turn in 0..<5 {
      _ = try await session.respond(to: "Question \(turn): is it sunny in city number \(turn * 7)?", options: greedy)
      XCTAssertEqual(
        stateFiles.filter { $0.hasSuffix("c.kv") }.count, 1, "one conversation file after turn \(turn + 1)")
      XCTAssertEqual(stateFiles.filter { $0.hasSuffix("s.kv") }.count, 1, "and its instructions")
      usages.append(cache.currentDiskUsage)
    }
    // Linear growth: each turn adds about the same; the sum of all states would be quadratic.
    let growth = zip(usages.dropFirst(), usages).map { $0 - $1 }
    XCTAssertLessThan(usages[4], usages[0] * 5, "usage \(usages)")
    XCTAssertLessThan(growth.max() ?? 0, 2 * (growth.min() ?? 0) + 1, "usage \(usages)")
  }

  func testFiles_areMode0600InADirectoryOf0700_andRemoveAllEmptiesIt() async throws {
    let cache = PromptCache.directory(directory)
    _ = try await answer(conversation(turns: 1), on: try model(cache))
    XCTAssertEqual(try mode(of: directory.path), 0o700)
    XCTAssertEqual(stateFiles.count, 2)
    for name in stateFiles { XCTAssertEqual(try mode(of: directory.path + "/" + name), 0o600, name) }
    XCTAssertGreaterThan(cache.currentDiskUsage, 0)
    try cache.removeAll()
    XCTAssertEqual(stateFiles, [])
    XCTAssertEqual(cache.currentDiskUsage, 0)
    let again = try await answer(conversation(turns: 1), on: try model(cache))
    XCTAssertEqual(again.cached, 0, "nothing left to load")
  }

  private func mode(of path: String) throws -> Int {
    try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
  }

  func testEviction_removesTheLeastRecentlyUsedPastMaximumBytes() async throws {
    // Measure one conversation's files, then allow a little more than two conversations' worth.
    let probe = PromptCache.directory(directory.appendingPathComponent("probe"))
    _ = try await answer(conversation(turns: 1), on: try model(probe))
    let one = probe.currentDiskUsage
    let cache = PromptCache.directory(directory.appendingPathComponent("small"), maximumBytes: one * 5 / 2)
    for city in 0..<4 {
      var transcript = Transcript(
        instructions: "Instructions number \(city), which differ for every conversation here.")
      transcript.entries = [.prompt("Is it sunny in city \(city)?")]
      _ = try await answer(transcript, on: try model(cache))
      XCTAssertLessThanOrEqual(cache.currentDiskUsage, one * 5 / 2, "after conversation \(city)")
    }
    let names = (try FileManager.default.contentsOfDirectory(atPath: directory.path + "/small")).filter {
      $0.hasSuffix(".kv")
    }
    XCTAssertGreaterThanOrEqual(names.count, 2, "the newest states stay: \(names)")
    XCTAssertLessThan(names.count, 8, "the oldest went: \(names)")
  }

  func testAStateLargerThanTheWholeCache_isNotSaved() async throws {
    let cache = PromptCache.directory(directory, maximumBytes: 1024)
    let reply = try await answer(conversation(turns: 1), on: try model(cache))
    XCTAssertEqual(stateFiles, [])
    XCTAssertTrue(reply.log.contains { $0.contains("exceeds maximumBytes") }, "\(reply.log)")
  }
}

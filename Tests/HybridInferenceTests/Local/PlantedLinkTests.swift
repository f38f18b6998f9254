import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// Someone who can write a directory the library writes in plants links (and
/// hard links) at every name the library creates there, final and
/// temporary, pointing at a file of the victim's outside it: the victim is
/// never written, and every file the library leaves is a regular file of
/// mode 0600 (a link at a final name is replaced by it, not followed).
final class PlantedLinkTests: XCTestCase {
  private let greedy = HybridGenerationOptions.foundationModels(
    GenerationOptions(sampling: .greedy, maximumResponseTokens: 8))
  private var root: URL!
  private let victimText = "the victim's own bytes\n"

  override func setUp() {
    root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("planted-links-\(UUID().uuidString)")
    XCTAssertNoThrow(try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true))
  }

  override func tearDown() {
    try? FileManager.default.removeItem(at: root)
  }

  /// A file outside every directory the library writes, and its bytes.
  private func makeVictim() throws -> String {
    let path = root.appendingPathComponent("victim").path
    try Data(victimText.utf8).write(to: URL(fileURLWithPath: path))
    return path
  }

  private func assertVictimUnchanged(_ victim: String, file: StaticString = #filePath, line: UInt = #line) {
    let bytes = FileManager.default.contents(atPath: victim).map { String(decoding: $0, as: UTF8.self) }
    XCTAssertEqual(bytes, victimText, "the victim was written through a planted link", file: file, line: line)
  }

  /// Links to `victim` at `names` in `directory`: symbolic ones, or hard
  /// ones (the file itself, under a second name).
  private func plant(_ names: [String], in directory: String, to victim: String, hard: Bool) throws {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    for name in names {
      let path = directory + "/" + name
      if hard {
        XCTAssertEqual(link(victim, path), 0, "hard link \(name)")
      } else {
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: victim)
      }
    }
  }

  private func assertPrivateRegularFile(_ path: String, file: StaticString = #filePath, line: UInt = #line) {
    var status = stat()
    XCTAssertEqual(lstat(path, &status), 0, "\(path) exists", file: file, line: line)
    XCTAssertEqual(status.st_mode & S_IFMT, S_IFREG, "\(path) is a regular file", file: file, line: line)
    XCTAssertEqual(status.st_mode & 0o777, 0o600, "\(path) is mode 0600", file: file, line: line)
    XCTAssertEqual(status.st_nlink, 1, "\(path) has no second name", file: file, line: line)
  }

  // MARK: The helper

  func testSave_replacesALinkAtItsName_andIsMode0600WhateverTheUmask() throws {
    let victim = try makeVictim()
    let directory = root.appendingPathComponent("dir").path
    for hard in [false, true] {
      try plant(["file"], in: directory, to: victim, hard: hard)
      let old = umask(0o277)
      defer { umask(old) }
      try PrivateFile.save(Array("new".utf8), named: "file", in: directory)
      assertVictimUnchanged(victim)
      assertPrivateRegularFile(directory + "/file")
      XCTAssertEqual(FileManager.default.contents(atPath: directory + "/file"), Data("new".utf8))
      unlink(directory + "/file")
    }
  }

  func testMakeDirectory_makesEachMissingLevel0700_andRefusesAFileInTheWay() throws {
    let deep = root.appendingPathComponent("a/b/c").path
    try PrivateFile.makeDirectory(deep)
    for path in [root.appendingPathComponent("a").path, root.appendingPathComponent("a/b").path, deep] {
      var status = stat()
      XCTAssertEqual(stat(path, &status), 0)
      XCTAssertEqual(status.st_mode & 0o777, 0o700, path)
    }
    let victim = try makeVictim()
    XCTAssertThrowsError(try PrivateFile.makeDirectory(victim + "/below"))
    assertVictimUnchanged(victim)
  }

  // MARK: The prompt cache

  /// Its states' names (learnt from a first run in another directory) and
  /// the temporary names a writer could guess (the process id and a
  /// counter), all planted before the first save. A link at `.lock` is the
  /// next test's.
  func testPromptCache_writesNoFileThroughALink_andItsStatesAre0600() async throws {
    let model = try LocalTestModels.require(LocalTestModels.tinyPath)
    let transcript = Transcript(entries: [
      .prompt("Tell me whether it is sunny in the city by the river, and say nothing else at all, please.")
    ])
    func answer(in directory: URL) async throws -> (text: String, cached: Int, log: [String]) {
      let local = LocalSystemModel(
        modelPath: model, contextSize: 512, threads: 2, promptCache: .directory(directory))
      return try await PromptCacheTests.answer(transcript, on: local, options: greedy)
    }
    let learn = root.appendingPathComponent("learn")
    _ = try await answer(in: learn)
    let states = try FileManager.default.contentsOfDirectory(atPath: learn.path).filter { $0.hasSuffix(".kv") }
    XCTAssertFalse(states.isEmpty)
    let guessable = (0...16).map { ".\(getpid())-\($0).kvtmp" }
    let victim = try makeVictim()
    for hard in [false, true] {
      let cache = root.appendingPathComponent(hard ? "hard" : "soft")
      try plant(states + guessable, in: cache.path, to: victim, hard: hard)
      let reply = try await answer(in: cache)
      assertVictimUnchanged(victim)
      XCTAssertFalse(reply.log.contains { $0.contains("cannot write") }, "\(reply.log)")
      for name in states { assertPrivateRegularFile(cache.path + "/" + name) }
      // The next process loads what this one saved.
      let again = try await answer(in: cache)
      XCTAssertGreaterThan(again.cached, 0, "hard: \(hard)")
      XCTAssertEqual(again.text, reply.text)
    }
  }

  /// The lock is never opened through a link: with one at `.lock` the lock
  /// cannot be taken, so no state is placed (a cache that cannot lock its
  /// directory saves nothing, rather than sharing a lock with the victim's file).
  func testPromptCache_aLinkAtItsLock_writesNothingThroughIt() async throws {
    let victim = try makeVictim()
    let cache = root.appendingPathComponent("locked")
    try plant([".lock"], in: cache.path, to: victim, hard: false)
    let local = LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyPath), contextSize: 512, threads: 2,
      promptCache: .directory(cache))
    let reply = try await PromptCacheTests.answer(
      Transcript(entries: [.prompt("Is it sunny in the city by the river today, would you say, my friend?")]),
      on: local, options: greedy)
    assertVictimUnchanged(victim)
    XCTAssertTrue(reply.log.contains { $0.contains("cannot place a state") }, "\(reply.log)")
    let left = try FileManager.default.contentsOfDirectory(atPath: cache.path)
    XCTAssertEqual(left.filter { $0.hasSuffix(".kv") || $0.hasSuffix(".kvtmp") }, [], "no state saved without the lock")
  }

  // MARK: The attention decisions

  /// The decision file's name, the temporary names a writer could guess,
  /// and `.lock`, in the machine's directory and in a prompt cache's.
  func testAttentionDecisions_writeNoFileThroughALink_andAre0600() async throws {
    let victim = try makeVictim()
    for hard in [false, true] {
      let key = try AttentionCalibrationStore.Key.test("planted-\(UUID().uuidString)")
      let machine = root.appendingPathComponent("machine-\(hard)")
      let cache = root.appendingPathComponent("cache-\(hard)")
      let names = [key.fileName, ".\(key.fileName).\(getpid()).tmp", ".lock"]
      try plant(names, in: machine.path, to: victim, hard: hard)
      try plant(names, in: cache.path, to: victim, hard: hard)
      let store = AttentionCalibrationStore(machineDirectory: machine)
      let verdict = await store.verdict(for: key, directory: cache) {
        AttentionCalibration.Verdict(flash: false, reason: "off (measured)")
      }
      XCTAssertEqual(verdict.flash, false)
      assertVictimUnchanged(victim)
      for directory in [machine, cache] {
        assertPrivateRegularFile(directory.appendingPathComponent(key.fileName).path)
        XCTAssertEqual(AttentionCalibrationStore.stored(key: key, directory: directory)?.flash, false, "\(directory)")
      }
    }
  }
}

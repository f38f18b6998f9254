import Foundation
import OpenAIServers
import TestPrerequisites
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// Images read on device: the tiny random LLaVA-style model with its
/// projector answers an image prompt itself (a hybrid's cloud, the test
/// Gemini server, is never asked), greedily as llama.cpp's own
/// llama-mtmd-cli does; what it cannot read still falls back.
final class DeviceImageTests: XCTestCase {
  private static let greedy = HybridGenerationOptions.foundationModels(
    GenerationOptions(sampling: .greedy, maximumResponseTokens: 8))

  private func seeing() throws -> LocalSystemModel {
    LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyVisionPath),
      projectorPath: try LocalTestModels.require(LocalTestModels.tinyProjectorPath), contextSize: 512, threads: 2)
  }

  /// A 40x30 checkerboard of two colours.
  private static let checks = TestPNG.encode(width: 40, height: 30) { x, y in
    (x + y) % 2 == 0 ? (255, 40, 0) : (0, UInt8(y * 8), 200)
  }
  /// A 20x20 vertical gradient.
  private static let gradient = TestPNG.encode(width: 20, height: 20) { _, y in (UInt8(y * 12), 90, 30) }

  private func hybrid(_ local: LocalSystemModel, _ gemini: GeminiTestServer, _ name: String) -> GenerativeModelSession {
    GenerativeModelSession(model: .hybridModel(primary: local, secondary: gemini.model(name)), logHandler: .silent)
  }

  func testAnImagePromptAnswersOnDevice_theCloudIsNotAsked() async throws {
    let gemini = try GeminiTestServer()
    defer { gemini.stop() }
    let name = "echo~" + UUID().uuidString
    let local = try seeing()
    let prompt = Prompt("What is in this picture?", attachments: [.image(Self.checks, mimeType: "image/png")])
    let described = try await hybrid(local, gemini, name).respond(to: prompt, options: Self.greedy)
    XCTAssertEqual(described.rawResponse.placement, .onDevice)
    XCTAssertEqual(described.rawResponse.modelVersion, LocalSystemModel.modelVersion)
    let cloudRequests = try await gemini.requestCount(name)
    XCTAssertEqual(cloudRequests, 0)
    // The prompt counts the image's 4 embeddings beside the text's tokens.
    let model = try await local.loadedModel(progress: nil)
    let text = model.template.render([
      ChatTemplate.Message(role: "user", content: "What is in this picture?\n<__media__>")
    ])
    let textTokens = try model.tokenize(
      text.text.replacingOccurrences(of: "<__media__>", with: ""), addSpecial: true, parseSpecial: true)
    XCTAssertEqual(described.rawResponse.usageMetadata?.promptTokenCount, textTokens.count + 4)
    XCTAssertEqual(described.rawResponse.usageMetadata?.cachedContentTokenCount ?? 0, 0, "nothing reused")
    // Counted as a request prefills it; a prompt alone, as its text and the image's embeddings.
    let counted = try await local.promptTokenCount(
      for: ModelRequest(transcript: Transcript(entries: [.prompt(prompt)])))
    XCTAssertEqual(counted, described.rawResponse.usageMetadata?.promptTokenCount)
    let promptCount = try await local.countTokens(prompt)
    let textCount = try await local.countTokens("What is in this picture?\n")
    XCTAssertEqual(promptCount, textCount + 4)
  }

  func testGreedyAnswersAreLlamaMTMDCLIs_oneImageAndTwoInOrder() async throws {
    guard let prefix = LlamaServerProcess.setUpPrefix,
      FileManager.default.isExecutableFile(atPath: prefix + "/bin/llama-mtmd-cli")
    else { throw Prerequisite.missing("llama-mtmd-cli (scripts/setup-llama.sh builds it)") }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("images-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let first = directory.appendingPathComponent("checks.png")
    let second = directory.appendingPathComponent("gradient.png")
    try Self.checks.write(to: first)
    try Self.gradient.write(to: second)
    let local = try seeing()
    for (images, files) in [([Self.checks], [first]), ([Self.checks, Self.gradient], [first, second])] {
      let prompt = Prompt(
        "What is in the picture?", attachments: images.map { .image($0, mimeType: "image/png") })
      // A session of its own for each: one turn, as the CLI's.
      let session = GenerativeModelSession(model: local, logHandler: .silent)
      let answer = try await session.respond(to: prompt, options: Self.greedy).content
      // The CLI's prompt as the device renders it: the text, then each image's marker on a line of its own.
      let text = (["What is in the picture?"] + files.map { _ in "<__media__>" }).joined(separator: "\n")
      let run = try ReferenceCLI.answer(
        prefix + "/bin/llama-mtmd-cli",
        [
          "-m", LocalTestModels.tinyVisionPath, "--mmproj", LocalTestModels.tinyProjectorPath,
          "-p", text, "--temp", "0", "-n", "8", "-t", "2", "-c", "512", "--seed", "1",
        ] + files.flatMap { ["--image", $0.path] })
      XCTAssertEqual(run.status, 0, "llama-mtmd-cli failed:\n\(run.stderr.suffix(3000))")
      XCTAssertEqual(
        answer.trimmingCharacters(in: .whitespacesAndNewlines),
        run.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
        "\(files.count) image(s); the CLI said:\n\(run.stderr.suffix(2000))")
    }
    // Swapped, the two images are read on device too.
    let swapped = try await GenerativeModelSession(model: local, logHandler: .silent).respond(
      to: Prompt(
        "What is in the picture?",
        attachments: [.image(Self.gradient, mimeType: "image/png"), .image(Self.checks, mimeType: "image/png")]),
      options: Self.greedy)
    XCTAssertEqual(swapped.rawResponse.placement, .onDevice)
  }

  /// An earlier image the device refused (answered in the cloud) is a
  /// placeholder in later turns, which stay on device.
  func testAnEarlierImageTheCheckRefuses_isAPlaceholderLater() async throws {
    let gemini = try GeminiTestServer()
    defer { gemini.stop() }
    let name = "echo~" + UUID().uuidString
    let session = hybrid(try seeing(), gemini, name)
    let truncated = ImageFixtures.jpeg(width: 28, height: 28, eoi: false)
    let first = try await session.respond(
      to: Prompt("What?", attachments: [.image(truncated, mimeType: "image/jpeg")]), options: Self.greedy)
    XCTAssertEqual(first.rawResponse.placement, .cloud)
    let second = try await session.respond(to: "And now?", options: Self.greedy)
    XCTAssertEqual(second.rawResponse.placement, .onDevice)
    let messages = try ChatTemplate.messages(
      of: Transcript(entries: Array(session.transcript.entries.dropLast())), reading: .images(marker: "<__media__>"))
    XCTAssertEqual(messages.first?.content, "What?\n[image: image/jpeg, \(DeviceMedia.size(truncated.count))]")
  }

  /// The images read are the user turns' readable ones, in the order their
  /// markers stand in the messages; the model's own and other media are placeholders.
  func testImagesAndMarkers_standInTheSameOrder() throws {
    let gif = ImageFixtures.gif(screen: (3, 3))
    let transcript = Transcript(entries: [
      .prompt(Prompt("One", attachments: [.image(Self.checks, mimeType: "image/png")])),
      .response(
        Content(parts: [Part(text: "Drawn:"), Part(inlineData: .init(mimeType: "image/png", data: Self.gradient))]),
        modelVersion: "gemini"),
      .prompt(
        Prompt(
          "Two",
          attachments: [
            .image(gif, mimeType: "image/gif"), .data(Data(count: 3), mimeType: "audio/wav"),
            .image(Self.gradient, mimeType: "image/png"),
          ])),
    ])
    XCTAssertEqual(DeviceMedia.images(readIn: transcript).map(\.data), [Self.checks, gif, Self.gradient])
    let refused = Result { () throws(HybridInferenceError) in
      try ChatTemplate.messages(of: transcript, reading: .images(marker: "<m>"))
    }
    guard case .failure(.unsupportedRequest(let why)) = refused else {
      return XCTFail("sound in the new prompt is not read: \(refused)")
    }
    XCTAssertTrue(why.contains("audio/wav"), why)
    var readable = transcript
    readable.entries[2] = .prompt(
      Prompt(
        "Two",
        attachments: [.image(gif, mimeType: "image/gif"), .image(Self.gradient, mimeType: "image/png")]))
    let messages = try ChatTemplate.messages(of: readable, reading: .images(marker: "<m>"))
    XCTAssertEqual(
      messages.map(\.content),
      ["One\n<m>", "Drawn:\n[image: image/png, \(DeviceMedia.size(Self.gradient.count))]", "Two\n<m>\n<m>"])
  }

  /// A cancelled image request stops (wherever it was), and the model answers the next.
  func testACancelledImageRequest_leavesTheModelAnswering() async throws {
    let local = try seeing()
    try await local.prepare()
    let prompt = Prompt("What is in the picture?", attachments: [.image(Self.checks, mimeType: "image/png")])
    let task = Task { try await GenerativeModelSession(model: local, logHandler: .silent).respond(to: prompt) }
    task.cancel()
    _ = await task.result
    let after = try await GenerativeModelSession(model: local, logHandler: .silent).respond(
      to: prompt, options: Self.greedy)
    XCTAssertEqual(after.rawResponse.placement, .onDevice)
  }

  func testWithoutAProjector_anImageFallsBack() async throws {
    let gemini = try GeminiTestServer()
    defer { gemini.stop() }
    let name = "echo~" + UUID().uuidString
    let blind = LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyVisionPath), contextSize: 512, threads: 2)
    let prompt = Prompt("What is this?", attachments: [.image(Self.checks, mimeType: "image/png")])
    let answer = try await hybrid(blind, gemini, name).respond(to: prompt, options: Self.greedy)
    XCTAssertEqual(answer.rawResponse.placement, .cloud)
    let cloudRequests = try await gemini.requestCount(name)
    XCTAssertEqual(cloudRequests, 1)
    XCTAssertFalse(blind.hasLoadedModel, "refused before the model loaded")
  }

  func testSoundToAVisionOnlyProjector_andAMarkerInTheText_fallBack() async throws {
    let gemini = try GeminiTestServer()
    defer { gemini.stop() }
    let name = "echo~" + UUID().uuidString
    let local = try seeing()
    let session = hybrid(local, gemini, name)
    let wav = Data("RIFF\u{24}\0\0\0WAVEfmt ".utf8) + Data(count: 32)
    let sound = try await session.respond(
      to: Prompt("What is this sound?", attachments: [.data(wav, mimeType: "audio/wav")]), options: Self.greedy)
    XCTAssertEqual(sound.rawResponse.placement, .cloud)
    // A user's marker would move the image: refused on device, so answered in the cloud.
    let moved = try await session.respond(
      to: Prompt("<__media__> first?", attachments: [.image(Self.checks, mimeType: "image/png")]),
      options: Self.greedy)
    XCTAssertEqual(moved.rawResponse.placement, .cloud)
    let cloudRequests = try await gemini.requestCount(name)
    XCTAssertEqual(cloudRequests, 2)
  }

  func testATruncatedJPEGIsATypedError_andUndecodableBytesStartNoProcess() async throws {
    let local = try seeing()
    let session = GenerativeModelSession(model: local, logHandler: .silent)
    let truncated = ImageFixtures.jpeg(width: 28, height: 28, eoi: false)
    let error = await captureError {
      try await session.respond(
        to: Prompt("What?", attachments: [.image(truncated, mimeType: "image/jpeg")]), options: Self.greedy)
    }
    guard case .invalidAttachment? = error as? HybridInferenceError else {
      return XCTFail("expected invalidAttachment, got \(String(describing: error))")
    }
    // A PNG whole in structure whose pixel data is short: the check takes it,
    // the decoder does not; libmtmd would try ffprobe then, which must not start.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("no-ffmpeg-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let started = directory.appendingPathComponent("started")
    for tool in ["ffprobe", "ffmpeg"] {
      let script = directory.appendingPathComponent(tool)
      try Data("#!/bin/sh\ntouch '\(started.path)'\nexit 1\n".utf8).write(to: script)
      XCTAssertEqual(chmod(script.path, 0o755), 0)
    }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    setenv("PATH", directory.path + ":" + path, 1)
    defer { setenv("PATH", path, 1) }
    let short = ImageFixtures.png(width: 300, height: 300)
    let undecodable = await captureError {
      try await session.respond(
        to: Prompt("What?", attachments: [.image(short, mimeType: "image/png")]), options: Self.greedy)
    }
    guard case .unsupportedRequest(let why)? = undecodable as? HybridInferenceError else {
      return XCTFail("expected unsupportedRequest, got \(String(describing: undecodable))")
    }
    XCTAssertTrue(why.contains("could not read"), why)
    XCTAssertFalse(FileManager.default.fileExists(atPath: started.path), "ffmpeg or ffprobe was started")
    // The session answers again after both.
    let after = try await session.respond(
      to: Prompt("And this?", attachments: [.image(Self.gradient, mimeType: "image/png")]), options: Self.greedy)
    XCTAssertEqual(after.rawResponse.placement, .onDevice)
  }

  /// The next text turn still reads the earlier image (a follow-up question
  /// still sees it), from the image turn's cells it keeps; a text session
  /// answering at the same time as an image one keeps its own answer.
  func testAfterAnImage_theNextTurnReadsIt_fromKeptCells_andSessionsAnswerTogether() async throws {
    let local = try seeing()
    let session = GenerativeModelSession(model: local, logHandler: .silent)
    _ = try await session.respond(
      to: Prompt("What is in the picture?", attachments: [.image(Self.checks, mimeType: "image/png")]),
      options: Self.greedy)
    let next = try await session.respond(to: "And now?", options: Self.greedy)
    XCTAssertEqual(next.rawResponse.placement, .onDevice)
    XCTAssertGreaterThan(next.rawResponse.usageMetadata?.cachedContentTokenCount ?? 0, 0)
    let asked = Transcript(entries: Array(session.transcript.entries.dropLast()))
    let messages = try ChatTemplate.messages(of: asked, reading: .images(marker: "<__media__>"))
    XCTAssertEqual(messages.first?.content, "What is in the picture?\n<__media__>")
    let counted = try await local.promptTokenCount(for: ModelRequest(transcript: asked))
    XCTAssertEqual(next.rawResponse.usageMetadata?.promptTokenCount, counted)

    let alone = try await GenerativeModelSession(model: local, logHandler: .silent).respond(
      to: "Hello there", options: Self.greedy
    ).content
    async let text = GenerativeModelSession(model: local, logHandler: .silent).respond(
      to: "Hello there", options: Self.greedy)
    async let image = GenerativeModelSession(model: local, logHandler: .silent).respond(
      to: Prompt("What is in the picture?", attachments: [.image(Self.gradient, mimeType: "image/png")]),
      options: Self.greedy)
    let (textAnswer, imageAnswer) = try await (text, image)
    XCTAssertEqual(textAnswer.content, alone)
    XCTAssertEqual(imageAnswer.rawResponse.placement, .onDevice)
  }

  /// Two model values of the same weights and projector load the projector
  /// once (at `prepare()`), and it is freed with the last of them.
  func testTheProjectorIsLoadedOncePerModel_andFreedWithTheModelValues() async throws {
    // Copies of their own: other tests' model values of the shared files may
    // still hold that projector while this one runs.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("projector-once-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let weights = directory.appendingPathComponent("model.gguf").path
    let projector = directory.appendingPathComponent("mmproj.gguf").path
    try FileManager.default.copyItem(
      atPath: try LocalTestModels.require(LocalTestModels.tinyVisionPath), toPath: weights)
    try FileManager.default.copyItem(
      atPath: try LocalTestModels.require(LocalTestModels.tinyProjectorPath), toPath: projector)
    weak var released: Projector?
    do {
      let first = LocalSystemModel(modelPath: weights, projectorPath: projector, contextSize: 512, threads: 2)
      let second = LocalSystemModel(modelPath: weights, projectorPath: projector, contextSize: 512, threads: 2)
      try await first.prepare()
      try await second.prepare()
      let one = try await first.loadedProjector(for: try await first.loadedModel(progress: nil))
      let other = try await second.loadedProjector(for: try await second.loadedModel(progress: nil))
      XCTAssertTrue(one === other)
      released = one
    }
    XCTAssertNil(released)
  }

  func testAnImagePromptOverTheWindowIsContextWindowExceeded() async throws {
    let small = LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyVisionPath),
      projectorPath: try LocalTestModels.require(LocalTestModels.tinyProjectorPath), contextSize: 256, threads: 2)
    let session = GenerativeModelSession(model: small, logHandler: .silent)
    let long = String(repeating: "word ", count: 300)
    let error = await captureError {
      try await session.respond(
        to: Prompt(long, attachments: [.image(Self.checks, mimeType: "image/png")]), options: Self.greedy)
    }
    guard case .contextWindowExceeded? = error as? HybridInferenceError else {
      return XCTFail("expected contextWindowExceeded, got \(String(describing: error))")
    }
  }
}

import Foundation
import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote
import XCTest

/// `hybrid-chat --image PATH`: the flag, the file checks, and the image on
/// the wire (the loopback Gemini server echoes the media it decoded), on the
/// device (refused, so prefer-on-device answers in the cloud).
final class CLIImageTests: XCTestCase {
  private typealias Chat = HybridChatProcess
  private let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A])
  private var directory: URL!

  override func setUpWithError() throws {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent("cli-image-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  }

  override func tearDownWithError() throws {
    try? FileManager.default.removeItem(at: directory)
  }

  private func file(_ name: String, _ data: Data) throws -> String {
    let url = directory.appendingPathComponent(name)
    try data.write(to: url)
    return url.path
  }

  private func usage(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) -> String? {
    do {
      try body()
      XCTFail("expected a usage error", file: file, line: line)
      return nil
    } catch {
      let failure = error as? CommandError
      XCTAssertEqual(failure?.kind, .usage, "\(error)", file: file, line: line)
      return failure?.message
    }
  }

  func testFlag_takesImagePathsInOrder_andRefusesOtherExtensions() throws {
    guard case .chat(let options) = try ArgumentParser.parse(["--image", "a.png", "--image=b.JPG", "hi"]) else {
      return XCTFail("expected a chat")
    }
    XCTAssertEqual(options.imagePaths, ["a.png", "b.JPG"])
    XCTAssertEqual(options.prompt, "hi")
    let message = usage { _ = try ArgumentParser.parse(["--image", "scan.bmp", "hi"]) }
    XCTAssertTrue(message?.contains(".jpg, .jpeg, .png, .webp or .gif") == true, message ?? "")
    XCTAssertNotNil(usage { _ = try ArgumentParser.parse(["--image"]) })
    XCTAssertNotNil(usage { _ = try ArgumentParser.parse(["--image="]) })
    XCTAssertEqual(
      try ["x.jpg", "x.JPEG", "x.png", "x.webp", "x.gif"].map { try ImageFile.mimeType(for: $0) },
      ["image/jpeg", "image/jpeg", "image/png", "image/webp", "image/gif"])
    XCTAssertNotNil(usage { _ = try ImageFile.mimeType(for: "noextension") })
  }

  func testLoad_readsRegularFilesOnly_withinTheLimit() throws {
    let path = try file("cat.png", png)
    let link = directory.appendingPathComponent("link.png").path
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
    let attachments = try ImageFile.load([path, link])
    XCTAssertEqual(attachments, [.image(png, mimeType: "image/png"), .image(png, mimeType: "image/png")])
    // A directory, a missing, an empty or a large file is refused (a device: below, in a child process).
    let folder = directory.appendingPathComponent("folder.png")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
    for (bad, says) in [
      (folder.path, "not a readable file"),
      (directory.appendingPathComponent("missing.png").path, "not a readable file"),
      (try file("empty.gif", Data()), "is empty"),
    ] {
      let message = usage { _ = try ImageFile.load([bad]) }
      XCTAssertTrue(message?.contains(says) == true, "\(bad): \(message ?? "")")
    }
    let message = usage { _ = try ImageFile.load([path], maximumBytes: 6) }
    XCTAssertTrue(message?.contains("at most 6") == true, message ?? "")
  }

  func testOnlyCloud_sendsTheImageWithTheFirstPrompt() async throws {
    try Chat.requireBinary()
    let server = try LoopbackGemini()
    defer { server.stop() }
    let result = try Chat.run(
      ["--mode", "only-cloud", "--cloud-model", "echo", "--image", try file("cat.png", png), "What is it?"],
      environment: server.environment)
    XCTAssertEqual(result.status, 0, result.stderr)
    XCTAssertEqual(result.stdout, "echo: What is it?[image/png, 7 bytes]\n")
    let body = try await server.lastRequestBody("echo")
    let parts = try XCTUnwrap((body["contents"] as? [[String: Any]])?.last?["parts"] as? [[String: Any]])
    XCTAssertEqual(parts.first?["text"] as? String, "What is it?")
    XCTAssertEqual((parts.last?["inlineData"] as? [String: Any])?["data"] as? String, png.base64EncodedString())
  }

  func testPreferOnDevice_answersTheImageInTheCloud_andOnlyOnDeviceRefusesIt() throws {
    try Chat.requireBinary()
    let model = try Chat.requireTinyModel()
    let server = try LoopbackGemini()
    defer { server.stop() }
    let image = try file("cat.webp", png)
    let result = try Chat.run(
      [
        "--model", model, "--mode", "prefer-on-device", "--cloud-model", "echo", "--json", "--image", image,
        "What is it?",
      ], environment: server.environment)
    XCTAssertEqual(result.status, 0, result.stderr)
    let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    XCTAssertEqual(object["content"] as? String, "echo: What is it?[image/webp, 7 bytes]")
    let fallback = try XCTUnwrap(object["fallback"] as? [String: Any], result.stdout)
    XCTAssertTrue((fallback["reason"] as? String)?.contains("reads text only") == true, "\(fallback)")

    let refused = try Chat.run(["--model", model, "--mode", "only-on-device", "--image", image, "What is it?"])
    XCTAssertEqual(refused.status, 1, refused.stderr)
    XCTAssertTrue(refused.stderr.contains("reads text only"), refused.stderr)
    let missing = try Chat.run(["--mode", "only-on-device", "--image", image + ".gone.png", "hi"])
    XCTAssertEqual(missing.status, 2, "a usage error before any model loads: \(missing.stderr)")
  }

  func testProjectorFlag_goesWithAModelPath() throws {
    guard case .chat(let options) = try ArgumentParser.parse(["--model", "m.gguf", "--projector", "p.gguf", "hi"])
    else {
      return XCTFail("expected a chat")
    }
    XCTAssertEqual(options.projectorPath, "p.gguf")
    XCTAssertEqual(options.localModel.projectorPath, "p.gguf")
    XCTAssertEqual(options.localModel.modelPath, "m.gguf")
    let message = usage {
      _ = try ArgumentParser.parse(["--model", "hf:org/repo/m.gguf", "--projector", "p.gguf", "hi"])
    }
    XCTAssertTrue(message?.contains("--projector") == true, message ?? "")
    XCTAssertNotNil(usage { _ = try ArgumentParser.parse(["--projector="]) })
  }

  func testWithAProjector_theDeviceAnswersTheImage() throws {
    try Chat.requireBinary()
    let (model, projector) = Chat.tinyVisionModel
    guard FileManager.default.fileExists(atPath: model), FileManager.default.fileExists(atPath: projector) else {
      XCTFail("missing \(model) or \(projector): run `make test`, which provisions the test models")
      throw XCTSkip("model missing")
    }
    let server = try LoopbackGemini()
    defer { server.stop() }
    // A 2x2 PNG of four colours.
    let pixels = Data(
      base64Encoded:
        "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGP4z8DAAMIM/4EAAB/uBfsL2WiLAAAAAElFTkSuQmCC")
    let image = try file("dots.png", try XCTUnwrap(pixels))
    let result = try Chat.run(
      [
        "--model", model, "--projector", projector, "--mode", "prefer-on-device", "--cloud-model", "echo", "--json",
        "--max-tokens", "4", "--temperature", "0", "--image", image, "What is it?",
      ], environment: server.environment)
    XCTAssertEqual(result.status, 0, result.stderr)
    let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    XCTAssertEqual(object["modelVersion"] as? String, LocalSystemModel.modelVersion, result.stdout)
    XCTAssertNil(object["fallback"] as? [String: Any], result.stdout)
  }

  func testADeviceNamedLikeAnImage_isRefused_notReadWithoutEnd() throws {
    try Chat.requireBinary()
    let zero = directory.appendingPathComponent("zero.png").path
    try FileManager.default.createSymbolicLink(atPath: zero, withDestinationPath: "/dev/zero")
    // In a child process with a deadline: reading /dev/zero would never end.
    let result = try Chat.run(["--mode", "only-on-device", "--image", zero, "hi"], timeout: 30)
    XCTAssertEqual(result.status, 2, result.stderr)
    XCTAssertTrue(result.stderr.contains("not a readable file"), result.stderr)
  }
}

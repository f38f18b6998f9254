import HybridChatCore
import HybridInferenceCore
import HybridInferenceLlama
import TestPrerequisites
import XCTest

/// `--gpu` (the on-device model's offload) and `--devices`: what they
/// accept, what they refuse, and where they go.
final class CLIGPUFlagTests: XCTestCase {
  func testValues() throws {
    let cases: [(String, GPUOffload)] = [
      ("auto", .automatic), ("none", .none), ("0", .none), ("20", .layers(20)),
      ("2147483647", .layers(2_147_483_647)),
    ]
    for (value, gpu) in cases {
      XCTAssertEqual(try chatOptions(["--gpu", value, "hi"]).gpu, gpu, value)
      XCTAssertEqual(try chatOptions(["--gpu=\(value)", "hi"]).gpu, gpu, value)
    }
    XCTAssertEqual(try chatOptions(["hi"]).gpu, .automatic, "the library's default")
  }

  func testBadValuesNameWhatIsExpected() {
    for value in ["-1", "all", "AUTO", "1.5", "+3", "", "2147483648", "99999999999999999999", " 3"] {
      let message = usageMessage(of: ["--gpu=\(value)", "hi"])
      XCTAssertTrue(message.hasPrefix("option '--gpu' needs auto, none or a number of layers"), message)
      XCTAssertTrue(message.hasSuffix("got '\(value)'"), message)
    }
    XCTAssertEqual(usageMessage(of: ["--gpu"]), "option '--gpu' needs a value")
  }

  /// The flag reaches the on-device model, whichever way `--model` names it.
  func testTheOffloadGoesToTheOnDeviceModel() throws {
    XCTAssertEqual(try chatOptions(["--gpu", "none", "--model", "/m.gguf", "hi"]).localModel.gpu, .none)
    XCTAssertEqual(try chatOptions(["--model", "/m.gguf", "--gpu", "7", "hi"]).localModel.gpu, .layers(7))
    XCTAssertEqual(try chatOptions(["--model", "/m.gguf", "hi"]).localModel.gpu, .automatic)
    let download = try chatOptions(["--gpu", "none", "--model", "hf:org/repo/m.gguf", "hi"]).localModel
    XCTAssertEqual(download.gpu, .none)
    XCTAssertNotNil(download.source)
    let byDefault = try chatOptions(["--gpu", "3", "hi"]).localModel
    XCTAssertEqual(byDefault.gpu, .layers(3))
    XCTAssertEqual(byDefault.modelPath, LocalSystemModel.default.modelPath)
    XCTAssertNil(try chatOptions(["--gpu", "3", "hi"]).generationOptions.foundationModels, "not a sampling option")
  }

  func testDevices_isACommandOfItsOwn() throws {
    XCTAssertEqual(try ArgumentParser.parse(["--devices"]), .devices)
    XCTAssertEqual(try ArgumentParser.parse(["--json", "--devices", "prompt"]), .devices)
  }

  func testTheListing_namesEachDevice() {
    let devices = LocalSystemModel.computeDevices
    let lines = DeviceListing.text(for: devices).split(separator: "\n")
    XCTAssertEqual(lines.count, devices.count)
    for (line, device) in zip(lines, devices) {
      XCTAssertTrue(line.hasPrefix(device.name), String(line))
      XCTAssertTrue(line.contains(device.kind.description), String(line))
    }
    XCTAssertTrue(lines.contains { $0.contains("cpu") && $0.contains(" free") }, "\(lines)")
    XCTAssertEqual(DeviceListing.text(for: []), "llama.cpp lists no compute device\n")
  }

  func testTheHelpDescribesBoth() throws {
    let lines = HelpText.usage.split(separator: "\n").map(String.init)
    let gpu = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("  --gpu G ") })
    XCTAssertTrue(lines[gpu...].prefix(3).joined().contains("auto"), lines[gpu])
    XCTAssertTrue(lines.contains { $0.hasPrefix("  --devices ") && $0.contains("list the devices") })
  }

  /// The built binary lists the devices and exits, loading no model.
  func testTheBinaryListsTheDevices() throws {
    try HybridChatProcess.requireBinary()
    let result = try HybridChatProcess.run(["--devices"])
    XCTAssertEqual(result.status, 0, result.stderr)
    XCTAssertTrue(result.stdout.contains("cpu"), result.stdout)
    XCTAssertEqual(result.stderr, "")
  }
}

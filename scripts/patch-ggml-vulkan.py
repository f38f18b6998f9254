"""Lets the pinned llama.cpp's Vulkan backend compile against Vulkan headers older than
VK_EXT_layer_settings (Debian 12's 1.3.239): the one use of it, settings for the
validation layer when that layer is installed, goes behind #ifdef VK_EXT_layer_settings,
and the instance is created without them otherwise. Headers that have the extension
compile the original code. Usage: patch-ggml-vulkan.py <llama.cpp source dir>"""
import pathlib
import sys

path = pathlib.Path(sys.argv[1]) / "ggml/src/ggml-vulkan/ggml-vulkan.cpp"
text = path.read_text()
start = "    VkBool32 enable_best_practice = layer_settings;\n"
end = ("    vk::InstanceCreateInfo instance_create_info(vk::InstanceCreateFlags{}, &app_info, layers, extensions, "
       "&layer_setting_info);\n")
if "#ifdef VK_EXT_layer_settings\n" + start in text:
    sys.exit(0)  # already patched
if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
    sys.exit(f"{path}: the VK_EXT_layer_settings block to guard was not found")
i, j = text.index(start), text.index(end) + len(end)
fallback = "    vk::InstanceCreateInfo instance_create_info(vk::InstanceCreateFlags{}, &app_info, layers, extensions);\n"
path.write_text(text[:i] + "#ifdef VK_EXT_layer_settings\n" + text[i:j] + "#else\n" + fallback + "#endif\n" + text[j:])

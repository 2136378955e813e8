import io
import json
from collections import Counter

import pytest

from sources.bundled import DATA_DIR, bundled_catalog, read_gpu_specs
from sources.catalog import (
    Catalog,
    Match,
    match_command,
    match_title,
    normalize,
    normalize_condition,
)
from sources.gpu_names import tokens

CATALOG = bundled_catalog()
SPEC_IDS = frozenset(read_gpu_specs(DATA_DIR / "specs" / "gpu_specs.csv")["gpu_id"].to_list())

# (title, expected gpu id or None, expected reason code). Written for these tests.
TITLES = [
    # --- GeForce, with brand noise -------------------------------------------------------
    ("ASUS ROG Strix GeForce RTX 4090 OC Edition 24GB GDDR6X", "rtx-4090", "matched"),
    ("NVIDIA GeForce RTX 4090 Founders Edition 24GB", "rtx-4090", "matched"),
    ("MSI GeForce RTX 4090 Gaming X Trio 24G", "rtx-4090", "matched"),
    ("Gigabyte AORUS GeForce RTX 4090 MASTER 24G", "rtx-4090", "matched"),
    ("ZOTAC Gaming GeForce RTX 4090 AMP Extreme AIRO", "rtx-4090", "matched"),
    ("PNY RTX4090 XLR8 Verto", "rtx-4090", "matched"),
    ("rtx-4090 24 gb", "rtx-4090", "matched"),
    ("GeForce® RTX™ 4090 graphics card", "rtx-4090", "matched"),
    ("EVGA GeForce RTX 2060 XC Ultra 6GB", "rtx-2060", "matched"),
    ("RTX 2060 6G", "rtx-2060", "matched"),
    ("MSI RTX 2070 Armor 8GB", "rtx-2070", "matched"),
    ("NVIDIA GeForce RTX 2080 Founders Edition", "rtx-2080", "matched"),
    ("EVGA RTX 2080 Ti FTW3 Ultra 11GB", "rtx-2080-ti", "matched"),
    ("rtx 2080ti 11g blower", "rtx-2080-ti", "matched"),
    ("NVIDIA TITAN RTX 24GB GDDR6", "titan-rtx", "matched"),
    ("Gigabyte RTX 3060 Gaming OC 12GB", "rtx-3060-12gb", "matched"),
    ("ROG-STRIX-RTX3060-O12G-V2-GAMING", "rtx-3060-12gb", "matched"),
    ("ASUS Dual RTX 3070 8GB", "rtx-3070", "matched"),
    ("NVIDIA GeForce RTX 3080 Founders Edition 10GB", "rtx-3080-10gb", "matched"),
    ("TUF-RTX3080-O10G-GAMING", "rtx-3080-10gb", "matched"),
    ("EVGA RTX 3080 FTW3 10 GB LHR", "rtx-3080-10gb", "matched"),
    ("MSI RTX 3080 Ti Suprim X 12G", "rtx-3080-ti", "matched"),
    ("RTX 3080Ti Founders", "rtx-3080-ti", "matched"),
    ("NVIDIA RTX 3090 Founders Edition 24GB", "rtx-3090", "matched"),
    ("MSI GeForce RTX 3090 Gaming X Trio 24GB GDDR6X", "rtx-3090", "matched"),
    ("ASUS TUF Gaming RTX 3090 Ti OC 24GB", "rtx-3090-ti", "matched"),
    ("RTX 3090Ti 24G", "rtx-3090-ti", "matched"),
    ("MSI RTX 4060 Ti Ventus 2X 16G", "rtx-4060-ti-16gb", "matched"),
    # Inno3D's "X3" is its three-fan cooler (a Greek shop title, 2026-10), not a lot of three.
    ("Inno3D RTX 5060 Ti 16GB X3", "rtx-5060-ti-16gb", "matched"),
    # Gigabyte's desktop "Aero" board with its memory after the name, not an AERO 16 laptop.
    ("Gigabyte GeForceRTX 5080 Aero 16GB OC", "rtx-5080", "matched"),
    ("RTX 4060 Ti 16 GB", "rtx-4060-ti-16gb", "matched"),
    ("NVIDIA GeForce RTX 4070 Founders Edition 12GB", "rtx-4070", "matched"),
    ("MSI GeForce RTX 4070 Ti Ventus 3X 12G OC", "rtx-4070-ti", "matched"),
    ("rtx 4070ti", "rtx-4070-ti", "matched"),
    ("ASUS TUF RTX 4070 Ti SUPER 16GB", "rtx-4070-ti-super", "matched"),
    ("RTX 4070 TiS 16G", "rtx-4070-ti-super", "matched"),
    ("RTX 4070TiSuper", "rtx-4070-ti-super", "matched"),
    ("NVIDIA RTX 4080 16GB Founders", "rtx-4080", "matched"),
    ("MSI RTX 4080 SUPER 16G Expert", "rtx-4080-super", "matched"),
    ("Palit RTX 4080S GamingPro", "rtx-4080-super", "matched"),
    ("NVIDIA GeForce RTX 5070 12GB", "rtx-5070", "matched"),
    ("ASUS Prime RTX 5070 Ti 16GB", "rtx-5070-ti", "matched"),
    ("RTX 5080 16GB GDDR7", "rtx-5080", "matched"),
    ("NVIDIA GeForce RTX 5090 Founders Edition 32GB", "rtx-5090", "matched"),
    ("Sapphire Nitro+ AMD Radeon RX 7900 XTX 24GB", "rx-7900-xtx", "matched"),
    ("RX7900XTX reference", "rx-7900-xtx", "matched"),
    ("Gigabyte GeForce RTX 4090 WINDFORCE V2 24G", "rtx-4090", "matched"),
    ("MSI GeForce RTX 3080 VENTUS 3X PLUS 10G OC LHR", "rtx-3080-10gb", "matched"),
    ("Inno3D RTX 3070 Twin X2 OC", "rtx-3070", "matched"),
    ("Inno3D GeForce RTX 4090 iChill X3 24GB", "rtx-4090", "matched"),
    ("ASUS TUF Gaming RTX 4070 Ti SUPER OC", "rtx-4070-ti-super", "matched"),
    ("XFX Speedster MERC310 Radeon RX 7900XTX Black 24GB", "rx-7900-xtx", "matched"),
    ("RTX5070", "rtx-5070", "matched"),
    ("RTX 5070Ti 16GB", "rtx-5070-ti", "matched"),
    ("Zotac RTX 3090 Trinity 24GB with 3 fans", "rtx-3090", "matched"),
    ("RTX 3080 Ti 12GB triple fan", "rtx-3080-ti", "matched"),
    ("Selling a 100% working RTX 3090", "rtx-3090", "matched"),
    ("RTX 3080 10GB, 1080p / 1440p gaming", "rtx-3080-10gb", "matched"),
    ("1x RTX 3090 FE", "rtx-3090", "matched"),
    ("RTX 3090s for sale, FE", "rtx-3090", "matched"),
    # --- Workstation cards ---------------------------------------------------------------
    ("NVIDIA Quadro RTX 5000 16GB", "quadro-rtx-5000", "matched"),
    ("PNY Quadro RTX 6000 24GB GDDR6", "quadro-rtx-6000", "matched"),
    ("NVIDIA Quadro RTX 8000 48GB", "quadro-rtx-8000", "matched"),
    ("NVIDIA RTX 8000 48GB passive", "quadro-rtx-8000", "matched"),
    ("PNY NVIDIA RTX A4000 16GB", "rtx-a4000", "matched"),
    ("NVIDIA RTX A4500 20GB", "rtx-a4500", "matched"),
    ("RTXA5000 24GB", "rtx-a5000", "matched"),
    ("NVIDIA RTX A5500", "rtx-a5500", "matched"),
    ("NVIDIA RTX A6000 48GB GDDR6", "rtx-a6000", "matched"),
    ("PNY NVIDIA RTX 6000 Ada Generation 48GB", "rtx-6000-ada", "matched"),
    ("RTX 6000 48GB", "rtx-6000-ada", "matched"),
    ("RTX 6000 24GB", "quadro-rtx-6000", "matched"),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition 96GB", "rtx-pro-6000-blackwell", "matched"),
    ("RTX PRO 6000 96GB GDDR7", "rtx-pro-6000-blackwell", "matched"),
    # --- Data-center cards ---------------------------------------------------------------
    ("NVIDIA Tesla V100 PCIe 16GB", "v100-pcie-16gb", "matched"),
    ("NVIDIA Tesla V100 SXM2 16GB", "v100-sxm2-16gb", "matched"),
    ("NVIDIA Tesla V100 SXM2 32GB", "v100-sxm2-32gb", "matched"),
    ("Tesla V100-SXM2-32GB HBM2", "v100-sxm2-32gb", "matched"),
    ("NVIDIA Tesla T4 16GB GDDR6", "t4", "matched"),
    ("Tesla T4", "t4", "matched"),
    ("NVIDIA T4 16GB", "t4", "matched"),
    ("NVIDIA A10 24GB PCIe", "a10", "matched"),
    ("NVIDIA A10G 24GB", "a10g", "matched"),
    ("NVIDIA A30 24GB HBM2", "a30", "matched"),
    ("NVIDIA A40 48GB", "a40", "matched"),
    ("NVIDIA A100 40GB PCIe", "a100-pcie-40gb", "matched"),
    ("NVIDIA A100 80GB PCIe", "a100-pcie-80gb", "matched"),
    ("A100-PCIE-80GB", "a100-pcie-80gb", "matched"),
    ("NVIDIA A100 SXM4 40GB", "a100-sxm4-40gb", "matched"),
    ("A100 SXM 80GB module", "a100-sxm4-80gb", "matched"),
    ("NVIDIA L4 24GB", "l4", "matched"),
    ("NVIDIA L40 48GB", "l40", "matched"),
    ("NVIDIA L40S 48GB", "l40s", "matched"),
    ("NVIDIA H100 PCIe 80GB", "h100-pcie-80gb", "matched"),
    ("NVIDIA H100 SXM5 80GB", "h100-sxm5-80gb", "matched"),
    ("H100 NVL 94GB", "h100-nvl-94gb", "matched"),
    ("NVIDIA H100 NVL PCIe", "h100-nvl-94gb", "matched"),
    ("NVIDIA H200 NVL 141GB", "h200-nvl", "matched"),
    ("NVIDIA H200 141GB HBM3e", "h200-sxm", "matched"),
    ("H200 SXM", "h200-sxm", "matched"),
    ("NVIDIA GH200 Grace Hopper Superchip", "gh200-96gb", "matched"),
    ("GH200 with H100 GPU 96GB HBM3", "gh200-96gb", "matched"),
    ("NVIDIA HGX B200 180GB", "b200", "matched"),
    ("AMD Instinct MI250 128GB", "mi250", "matched"),
    ("AMD Instinct MI300X 192GB OAM", "mi300x", "matched"),
    ("AMD Instinct MI 300X", "mi300x", "matched"),
    ("AMD MI325X 256GB", "mi325x", "matched"),
    ("Dell NVIDIA A100 40GB PCIe passive GPU", "a100-pcie-40gb", "matched"),
    ("NVIDIA H100 Tensor Core GPU SXM5 80GB HBM3", "h100-sxm5-80gb", "matched"),
    ("NVIDIA H100 80GB PCIe Gen5", "h100-pcie-80gb", "matched"),
    ("H100 NVL", "h100-nvl-94gb", "matched"),
    ("NVIDIA H200 141GB NVL PCIe", "h200-nvl", "matched"),
    ("NVIDIA L40 S 48GB", "l40s", "matched"),
    ("Tesla A10", "a10", "matched"),
    ("HPE NVIDIA Tesla T4 16GB Computational Accelerator", "t4", "matched"),
    ("NVIDIA Tesla V100 32GB SXM2 accelerator for server", "v100-sxm2-32gb", "matched"),
    ("NVIDIA Tesla T4 16GB low profile bracket", "t4", "matched"),
    ("Low profile bracket for Tesla T4", None, "accessory"),
    # --- Marketplace text, full-width, other languages -----------------------------------
    ("New Listing NVIDIA RTX 3090 24GB", "rtx-3090", "matched"),
    ("NEW LISTINGASUS RTX 4080 16GB", "rtx-4080", "matched"),
    ("RTX 4070 Ti 12GB Opens in a new window or tab", "rtx-4070-ti", "matched"),
    ("New Listing RTX 5090 32GB Opens in a new window or tab", "rtx-5090", "matched"),
    ("ＲＴＸ４０９０", "rtx-4090", "matched"),
    ("ＮＶＩＤＩＡ ＧｅＦｏｒｃｅ ＲＴＸ ３０９０ ２４ＧＢ", "rtx-3090", "matched"),
    ("Grafikkarte NVIDIA GeForce RTX 4080 16GB", "rtx-4080", "matched"),
    ("MSI Grafikkarte RTX 3080 10GB gebraucht", "rtx-3080-10gb", "matched"),
    ("Carte graphique NVIDIA RTX 4070 12 Go", "rtx-4070", "matched"),
    ("Carte graphique RTX 3060 12 Go", "rtx-3060-12gb", "matched"),
    ("Tarjeta gráfica NVIDIA GeForce RTX 4090 24GB", "rtx-4090", "matched"),
    ("Tarjeta gráfica AMD Radeon RX 7900 XTX", "rx-7900-xtx", "matched"),
    ("グラフィックボード NVIDIA GeForce RTX 4070 Ti 12GB", "rtx-4070-ti", "matched"),
    ("玄人志向 グラフィックボード RTX3090 24GB 中古", "rtx-3090", "matched"),
    ("显卡 NVIDIA RTX 4090 24G 公版", "rtx-4090", "matched"),
    ("英伟达 显卡 A100 80G PCIe", "a100-pcie-80gb", "matched"),
    ("NVIDIA GeForce RTX 4090 24GB - Neu & OVP", "rtx-4090", "matched"),
    ("Carte graphique ASUS RTX 4080 16Go neuve", "rtx-4080", "matched"),
    ("Tarjeta Gráfica Nvidia RTX 4070 Ti 12GB nueva", "rtx-4070-ti", "matched"),
    ("MSI RTX 3080 Ti Gaming X Trio 12G - keine Defekte", "rtx-3080-ti", "matched"),
    ("华硕 RTX 4090 猛禽 显卡 24GB", "rtx-4090", "matched"),
    ("RTX3090 显卡 24G 二手", "rtx-3090", "matched"),
    # --- Accessories ---------------------------------------------------------------------
    ("EK-Quantum water block for RTX 3090 FE", None, "accessory"),
    ("Bykski waterblock RTX 4090 Founders", None, "accessory"),
    ("RTX 3080 FE backplate", None, "accessory"),
    ("GPU support bracket anti sag RTX 4090", None, "accessory"),
    ("Replacement fan for RTX 3070 Gaming OC", None, "accessory"),
    ("RTX 3090 Gaming X Trio fans only", None, "accessory"),
    ("Stock cooler heatsink from RTX 2080 Ti", None, "accessory"),
    ("12VHPWR cable for RTX 4090", None, "accessory"),
    ("PCIe 4.0 riser RTX 4090 compatible", None, "accessory"),
    ("NVIDIA RTX 4090 Founders Edition box only", None, "accessory"),
    ("RTX 3080 empty box", None, "accessory"),
    ("RTX 4090 original box", None, "accessory"),
    ("Picture of RTX 4090", None, "accessory"),
    ("RTX 3090 shroud replacement", None, "accessory"),
    ("Thermal pads for RTX 3080", None, "accessory"),
    ("Wasserkühler für RTX 4080", None, "accessory"),
    ("RTX 3090 with EK water block and backplate", "rtx-3090", "matched"),
    ("RTX 4090 FE in original box", "rtx-4090", "matched"),
    ("Tesla T4 16GB with full height bracket", "t4", "matched"),
    ("GPU Anti-Sag Bracket", None, "accessory"),
    ("GPU sag holder", None, "accessory"),
    ("RTX 4090 FE 24GB w/ anti-sag bracket", "rtx-4090", "matched"),
    ("RTX 4090 FE w/ 12VHPWR cable", "rtx-4090", "matched"),
    ("NVIDIA RTX 4090 photo of box", None, "accessory"),
    ("RTX 2080 Ti fan replacement kit", None, "accessory"),
    ("ASUS RTX 3090 ROG Strix cooler only", None, "accessory"),
    ("Founders Edition RTX 3080 box only no GPU", None, "accessory"),
    (
        "Zotac RTX 4080 16GB Graphics Card - 16GB GDDR6X, Metal Backplate, Anti-Sag Bracket",
        "rtx-4080",
        "matched",
    ),
    ("Graphics Card Support Bracket RTX 4090 anti sag", None, "accessory"),
    ("Fan for RTX 3070 Gaming OC", None, "accessory"),
    ("RTX 3070 8GB with 3 fans for quiet operation", "rtx-3070", "matched"),
    ("Graphics card backplate for RTX 3080", None, "accessory"),
    ("RTX 3090 Founders Edition cooler", None, "accessory"),
    ("MSI RTX 4090 Suprim Liquid X 24G with AIO cooler", "rtx-4090", "matched"),
    ("NVIDIA RTX A6000 NVLink Bridge 2-slot", None, "accessory"),
    ("RTX 3080 10GB 16 in stock", "rtx-3080-10gb", "matched"),
    ("RTX 3060 Ti OC boost 2070 MHz 8GB", "rtx-3060-ti", "matched"),
    ("MSI RTX 4070 12G boost 2610 MHz 200W", "rtx-4070", "matched"),
    # --- For parts -----------------------------------------------------------------------
    ("RTX 3080 10GB for parts", None, "for_parts"),
    ("RTX 3090 not working", None, "for_parts"),
    ("Broken RTX 4090 cracked PCB", None, "for_parts"),
    ("Defective RTX 2080 Ti", None, "for_parts"),
    ("RTX 3070 sold as is", None, "for_parts"),
    ("RTX 3080 Ti no display", None, "for_parts"),
    ("RTX 2080 Ti artifacting", None, "for_parts"),
    ("Faulty RTX 3090 Ti", None, "for_parts"),
    ("RTX 4080 defekt", None, "for_parts"),
    ("Grafikkarte RTX 3080 für Bastler", None, "for_parts"),
    ("Carte graphique RTX 3070 pour pièces", None, "for_parts"),
    ("RTX 3080 en panne", None, "for_parts"),
    ("RTX 3090 HS", None, "for_parts"),
    ("Tarjeta gráfica RTX 3060 12GB para piezas", None, "for_parts"),
    ("RTX 4070 averiada", None, "for_parts"),
    ("RTX 3090 24GB ジャンク", None, "for_parts"),
    ("RTX 3090 24GB tested, no artifacts", "rtx-3090", "matched"),
    ("RTX 4080 16GB not broken, works great", "rtx-4080", "matched"),
    ("NVIDIA RTX 4090 - artifacts, for repair", None, "for_parts"),
    ("RTX 4090 melted connector", None, "for_parts"),
    ("RTX 3090 as-is", None, "for_parts"),
    ("RTX 4070 12G no display output", None, "for_parts"),
    ("Grafikkarte RTX 3090 24GB defekt kein Bild", None, "for_parts"),
    ("Tarjeta gráfica RTX 3080 10GB averiada no funciona", None, "for_parts"),
    ("Used RTX 3090 Founders Edition, no issues, no artifacting", "rtx-3090", "matched"),
    ("RTX 3080 10GB tested working, not defective", "rtx-3080-10gb", "matched"),
    ("RTX 4090 -- not for parts", "rtx-4090", "matched"),
    ("RTX 3080 10GB no display issues", "rtx-3080-10gb", "matched"),
    # --- Laptops -------------------------------------------------------------------------
    ("RTX 4090 Laptop GPU 16GB", None, "laptop"),
    ("Gaming notebook RTX 3080", None, "laptop"),
    ("NVIDIA RTX 3080 Mobile", None, "laptop"),
    ("RTX 2080 Max-Q", None, "laptop"),
    ("ASUS ROG Zephyrus G14 RTX 4090", None, "laptop"),
    ("Lenovo Legion Pro 7 RTX 4080", None, "laptop"),
    ("Razer Blade 16 RTX 4090", None, "laptop"),
    ("MSI Titan GT77 RTX 4090", None, "laptop"),
    ("ASUS ROG Strix G16 i9-13980HX RTX 4070", None, "laptop"),
    ("PC portable RTX 4060 Ti 16GB", None, "laptop"),
    ("ノートパソコン RTX 3070", None, "laptop"),
    ("RTX 3070 Max Q 8GB", None, "laptop"),
    ("ASUS ROG Strix SCAR 18 RTX 4090", None, "laptop"),
    ("HP Omen 17 RTX 3080", None, "laptop"),
    ("Acer Predator Helios 16 RTX 4080", None, "laptop"),
    ("Dell XPS 15 RTX 4070", None, "laptop"),
    ("ASUS TUF Gaming F15 RTX 3070", None, "laptop"),
    ("MSI Raider GE78 HX RTX 4090", None, "laptop"),
    ('17.3" RTX 3080 16GB i7-11800H', None, "laptop"),
    ("NVIDIA RTX A5000 Laptop GPU", None, "laptop"),
    # --- Whole systems -------------------------------------------------------------------
    ("Custom gaming PC RTX 4090", None, "system"),
    ("Dell desktop computer with RTX 3080", None, "system"),
    ("Prebuilt RTX 4070 Ti SUPER", None, "system"),
    ("Tower PC RTX 3090 water cooled", None, "system"),
    ("Computer with RTX 4080 SUPER", None, "system"),
    ("i9-13900K RTX 4090 64GB DDR5", None, "system"),
    ("AMD Ryzen 9 7950X3D RTX 4090 build", None, "system"),
    ("Intel Core i7 RTX 3070 32GB RAM 1TB SSD", None, "system"),
    ("NVIDIA DGX H100 80GB", None, "system"),
    ("ゲーミングPC RTX 4070", None, "system"),
    ("Lenovo Legion Tower 7i RTX 4080", None, "system"),
    ("HP OMEN 45L RTX 4090 desktop", None, "system"),
    ("Alienware Aurora R15 RTX 4090", None, "system"),
    ("Gaming PC Ryzen 7 5800X RTX 3070", None, "system"),
    ("HP Z8 G4 workstation Xeon Quadro RTX 8000", None, "system"),
    # --- Lots ----------------------------------------------------------------------------
    ("Lot of 4 RTX 3090", None, "lot"),
    ("RTX 3060 12GB lot", None, "lot"),
    ("RTX 3090 24GB x2", None, "lot"),
    ("2x RTX 3090 Founders Edition", None, "lot"),
    ("3x NVIDIA A100 80GB PCIe", None, "lot"),
    ("4x Tesla V100 SXM2 32GB", None, "lot"),
    ("RTX 4090 bundle", None, "lot"),
    ("Pair of RTX 3090 with NVLink bridge", None, "lot"),
    ("Set of two RTX A6000", None, "lot"),
    ("HGX H100 8-GPU SXM5", None, "lot"),
    ("RTX 4090 2x HDMI 3x DisplayPort", "rtx-4090", "matched"),
    ("NVIDIA Tesla T4 PCIe 3.0 x16", "t4", "matched"),
    ("RTX 3080 10GB PCIe 4.0 x8", "rtx-3080-10gb", "matched"),
    ("Supermicro SYS-420GP 8x A100 80GB", None, "lot"),
    ("NVIDIA HGX H100 8 GPU baseboard", None, "lot"),
    ("RTX 3060 12GB (qty 2 available)", None, "lot"),
    ("2 Stück RTX 3070", None, "lot"),
    ("Lot de 2 RTX 3080", None, "lot"),
    ("Lote 3 tarjetas RTX 3060", None, "lot"),
    ("RTX 3090 2枚セット", None, "lot"),
    ("RTX 4090 Gaming OC x 2", None, "lot"),
    ("NVIDIA RTX 4090 24GB with 2 x 8-pin adapter", "rtx-4090", "matched"),
    ("NVIDIA RTX 4090 24GB GDDR6X 384-bit 2x fans", "rtx-4090", "matched"),
    ("NVIDIA A100 80GB PCIe x 4", None, "lot"),
    ("ASUS RTX 4090 TUF - 2 available", "rtx-4090", "matched"),
    ("MSI GeForce RTX 4090 SUPRIM X 24G x 1", "rtx-4090", "matched"),
    # --- Several models ------------------------------------------------------------------
    ("RTX 3080 / 3090", None, "multi_model"),
    ("RTX 4080 or 4090", None, "multi_model"),
    ("RTX 3080 Ti / RTX 3080 10GB", None, "multi_model"),
    ("A100 or H100 PCIe 80GB", None, "multi_model"),
    ("RTX A6000 / RTX 6000 Ada 48GB", None, "multi_model"),
    ("RTX 3060 Ti or RTX 3070", None, "multi_model"),
    ("L40 L40S 48GB", None, "multi_model"),
    ("GeForce RTX 4070 Ti SUPER 16GB / 4080 16GB", None, "multi_model"),
    ("AMD Radeon RX 7900 XTX / RX 7900 XT", None, "multi_model"),
    ("NVIDIA A10 vs A10G", None, "multi_model"),
    ("Quadro RTX 6000 / RTX 8000", None, "multi_model"),
    ("RTX 4090 / 4090 Ti", None, "multi_model"),
    # --- Memory or form factor missing ---------------------------------------------------
    ("NVIDIA GeForce RTX 3060", None, "ambiguous"),
    ("EVGA RTX 3080 FTW3 Ultra", None, "ambiguous"),
    ("RTX 3080 10GB / 12GB", None, "ambiguous"),
    ("MSI RTX 4060 Ti Ventus", None, "ambiguous"),
    ("NVIDIA A100", None, "ambiguous"),
    ("NVIDIA A100 80GB", None, "ambiguous"),
    ("NVIDIA A100 PCIe", None, "ambiguous"),
    ("Tesla V100 16GB", None, "ambiguous"),
    ("Tesla V100 SXM2", None, "ambiguous"),
    ("Tesla V100 32GB", None, "ambiguous"),
    ("NVIDIA H100 80GB HBM3", None, "ambiguous"),
    ("NVIDIA RTX 6000", None, "ambiguous"),
    ("RTX A6000 Ada 48GB", None, "ambiguous"),
    ("NVIDIA RTX 5000", None, "ambiguous"),
    ("H100 PCIe / SXM5 80GB", None, "ambiguous"),
    # --- Not in the catalog --------------------------------------------------------------
    ("EVGA GTX 1080 Ti 11GB", "gtx-1080-ti", "matched"),
    ("NVIDIA GeForce RTX 4060 8GB", "rtx-4060", "matched"),
    ("MSI RTX 4070 SUPER 12G Ventus 2X", "rtx-4070-super", "matched"),
    ("RTX 4070S 12GB", "rtx-4070-super", "matched"),
    ("NVIDIA RTX 4090 D 24GB", "rtx-4090-d", "matched"),
    ("RTX 4090D", "rtx-4090-d", "matched"),
    ("AMD Radeon RX 7900 XT 20GB", "rx-7900-xt", "matched"),
    ("RX 7900XT", "rx-7900-xt", "matched"),
    ("AMD Radeon RX 6800 16GB", "rx-6800", "matched"),
    ("NVIDIA Titan V 12GB HBM2", "titan-v", "matched"),
    ("AMD Instinct MI300A", "mi300a", "matched"),
    ("NVIDIA RTX A1000 8GB", None, "unknown"),
    ("RTX 3050 8GB", "rtx-3050-8gb", "matched"),
    ("Intel Arc A770 16GB", "arc-a770-16gb", "matched"),
    ("RTX 3060 8GB", "rtx-3060-8gb", "matched"),
    ("RTX 3080 12GB LHR", "rtx-3080-12gb", "matched"),
    ("RTX 4060 Ti 8GB", "rtx-4060-ti-8gb", "matched"),
    ("Tesla V100 PCIe 32GB", "v100-pcie-32gb", "matched"),
    ("RTX 3060 Ti 8GB", "rtx-3060-ti", "matched"),
    ("RTX 3070 Ti 8GB", "rtx-3070-ti", "matched"),
    ("RTX 2080 SUPER 8GB", "rtx-2080-super", "matched"),
    ("Quadro P6000 24GB", None, "unknown"),
    ("NVIDIA RTX 5000 Ada 32GB", "rtx-5000-ada", "matched"),
    ("Samsung 990 Pro 2TB", None, "unknown"),
    ("Tesla P40 24GB", "p40", "matched"),
    ("rtx 4090ti", None, "unknown"),
    ("RTX 3090 Super", None, "unknown"),
    ("RTX 2060 12GB", "rtx-2060-12gb", "matched"),
    ("RX 7900 GRE 16GB", "rx-7900-gre", "matched"),
    ("NVIDIA Titan Xp", "titan-xp", "matched"),
    ("AMD Instinct MI250X", "mi250x", "matched"),
    ("NVIDIA A2 16GB", "a2", "matched"),
    ("NVIDIA RTX 4000 SFF Ada 20GB", "rtx-4000-ada", "matched"),
    (
        "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
        "rtx-pro-6000-blackwell-max-q",
        "matched",
    ),
    ("NVIDIA GH200 144GB HBM3e", "gh200-144gb", "matched"),
    ("PNY Quadro RTX 4000 8GB", "quadro-rtx-4000", "matched"),
    ("RX 9070 XT 16GB", "rx-9070-xt", "matched"),
    ("NVIDIA GeForce RTX 5060 Ti 16GB", "rtx-5060-ti-16gb", "matched"),
    ("Tesla V100S 32GB", "v100s-pcie-32gb", "matched"),
    # --- Empty ---------------------------------------------------------------------------
    ("", None, "empty"),
    ("   ", None, "empty"),
    ("New Listing", None, "empty"),
]


def _code(reason: str) -> str:
    return reason.split(":", 1)[0]


@pytest.mark.parametrize(("title", "gpu", "code"), TITLES, ids=[t[0] or "<blank>" for t in TITLES])
def test_match_title(title, gpu, code):
    match = match_title(title, CATALOG)
    assert (match.gpu, _code(match.reason)) == (gpu, code), match.reason


def test_table_is_large_and_covers_every_code():
    assert len(TITLES) >= 150
    assert len({t[0] for t in TITLES}) == len(TITLES), "duplicate titles"
    codes = Counter(code for _, _, code in TITLES)
    assert set(codes) == {
        "matched",
        "accessory",
        "for_parts",
        "laptop",
        "system",
        "lot",
        "multi_model",
        "ambiguous",
        "unknown",
        "empty",
    }


def test_reasons_read_as_code_and_detail():
    assert match_title("NVIDIA A100 80GB PCIe", CATALOG) == Match(
        "a100-pcie-80gb", "matched: a100 + 80 GB + pcie"
    )
    assert match_title("RTX 4090 Laptop GPU", CATALOG).reason == "laptop: laptop"
    assert match_title("RTX 4080 or 4090", CATALOG).reason == "multi_model: rtx 4080, 4090"
    assert match_title("", CATALOG).reason == "empty: empty title"


def test_every_returnable_id_is_in_the_spec_sheet():
    assert CATALOG.gpu_ids == SPEC_IDS
    returned = {match_title(t, CATALOG).gpu for t, _, _ in TITLES} - {None}
    assert returned <= SPEC_IDS


def test_every_spec_name_matches_its_own_id():
    specs = read_gpu_specs(DATA_DIR / "specs" / "gpu_specs.csv")
    for row in specs.iter_rows(named=True):
        assert match_title(row["name"], CATALOG).gpu == row["gpu_id"], row["name"]


def test_catalog_only_returns_ids_of_its_rows():
    columns = ("gpu_id", "name", "form_factor", "memory_gb")
    rows = [
        dict(zip(columns, ("rtx-4090", "GeForce RTX 4090", "pcie", 24), strict=True)),
        dict(zip(columns, ("a100-sxm4-80gb", "A100 SXM4 80 GB", "sxm", 80), strict=True)),
    ]
    small = Catalog(rows)
    assert small.gpu_ids == {"rtx-4090", "a100-sxm4-80gb"}
    assert match_title("RTX 4090", small).gpu == "rtx-4090"
    assert match_title("A100 80GB", small).gpu == "a100-sxm4-80gb"  # the only A100 it knows
    assert _code(match_title("RTX 3090", small).reason) == "unknown"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rtx4090ti", ["rtx", "4090", "ti"]),
        ("rtx-a6000 48gb", ["rtx", "a6000", "48", "gb"]),
        ("rx7900xtx", ["rx", "7900", "xtx"]),
        ("4070tisuper 16g", ["4070", "ti", "super", "16", "g"]),
        ("a100 l40s mi300x", ["a100", "l40s", "mi300x"]),
        ("boost 2070 mhz, 384-bit", ["boost"]),
    ],
)
def test_tokens(text, expected):
    assert tokens(text) == expected


def test_normalize_strips_marketplace_text_and_marks():
    assert normalize("New ListingＲＴＸ™４０９０ Opens in a new window or tab") == "rtx 4090"
    assert normalize("RTX 3090 w/ box, w/o fans") == "rtx 3090 with box, without fans"


def test_bundled_catalog_is_cached():
    assert bundled_catalog() is bundled_catalog()


@pytest.mark.parametrize(
    ("condition", "title", "expected"),
    [
        ("Brand New", "", "new"),
        ("New", "", "new"),
        ("Neu", "", "new"),
        ("Neuf", "", "new"),
        ("Nuevo", "", "new"),
        ("新品", "", "new"),
        ("Pre-Owned", "", "used"),
        ("Used", "", "used"),
        ("Used - Like New", "", "used"),
        ("Gebraucht", "", "used"),
        ("Occasion", "", "used"),
        ("Usado", "", "used"),
        ("中古", "", "used"),
        ("Refurbished", "", "refurbished"),
        ("Certified - Refurbished", "", "refurbished"),
        ("Seller refurbished", "", "refurbished"),
        ("Generalüberholt", "", "refurbished"),
        ("Reconditionné", "", "refurbished"),
        ("Renewed", "", "refurbished"),
        ("For parts or not working", "", "for_parts"),
        ("Defekt", "", "for_parts"),
        ("ジャンク", "", "for_parts"),
        ("Used", "RTX 3090 24GB for parts", "for_parts"),
        ("Brand New", "RTX 4090 not working", "for_parts"),
        ("Used", "RTX 3090 24GB no artifacts", "used"),
        (None, "RTX 3080 broken", "for_parts"),
        (None, "RTX 3080 10GB", None),
        ("", "", None),
        ("Condition: see description", "", None),
    ],
)
def test_normalize_condition(condition, title, expected):
    assert normalize_condition(condition, title) == expected


def test_match_command_one_title():
    out = io.StringIO()
    assert match_command(["ASUS TUF RTX 4090 OC 24GB"], io.StringIO(), out, CATALOG) == 0
    assert out.getvalue() == '{"gpu": "rtx-4090", "reason": "matched: rtx 4090"}\n'


def test_match_command_reads_stdin_in_order():
    titles = "RTX 3060\n\nＲＴＸ４０９０ 显卡\nNVIDIA H200 NVL 141GB\n"
    out = io.StringIO()
    assert match_command(["-"], io.StringIO(titles), out, CATALOG) == 0
    assert out.getvalue().splitlines() == [
        '{"gpu": null, "reason": "ambiguous: rtx 3060 could be GeForce RTX 3060 12 GB / '
        'GeForce RTX 3060 8 GB"}',
        '{"gpu": null, "reason": "empty: empty title"}',
        '{"gpu": "rtx-4090", "reason": "matched: rtx 4090"}',
        '{"gpu": "h200-nvl", "reason": "matched: h200 + 141 GB + nvl"}',
    ]
    assert [json.loads(line)["gpu"] for line in out.getvalue().splitlines()] == [
        None,
        None,
        "rtx-4090",
        "h200-nvl",
    ]


def test_match_command_keeps_non_ascii_text():
    out = io.StringIO()
    match_command(["RTX 3090 ジャンク"], io.StringIO(), out, CATALOG)
    assert out.getvalue() == '{"gpu": null, "reason": "for_parts: ジャンク"}\n'

#pragma once
// Which HWSKUs sonic-utilities' Generic Config Updater lets change the RDMA tables
// (WRED_PROFILE, BUFFER_PROFILE): the ASIC families of its helper_data in
// generic_config_updater/gcu_field_operation_validators.conf.json. Mellanox HWSKUs match
// exactly (case-insensitive), Broadcom ones as a substring of the HWSKU, as
// field_operation_validators.get_asic_name() matches them. cisco-8000 and
// marvell-teralynx are known by the ASIC type, which config_db does not hold.
// Private to fabric/src/drivers.

#include <optional>
#include <string>

namespace rocelab::fabric::drivers {

// "spc2" for "ACS-MSN3800", "th2" for "Arista-7260CX3-C64", nullopt when not listed.
[[nodiscard]] std::optional<std::string> gcu_rdma_asic(const std::string& hwsku);

}  // namespace rocelab::fabric::drivers

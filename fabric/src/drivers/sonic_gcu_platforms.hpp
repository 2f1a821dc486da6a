#pragma once
// The rules of sonic-utilities' Generic Config Updater (`config apply-patch`) that decide
// whether it lets a patch change the RDMA tables (WRED_PROFILE, BUFFER_PROFILE), per
// SONiC release: generic_config_updater/field_operation_validators.py
// (get_asic_name, rdma_config_update_validator) with gcu_field_operation_validators.conf.json
// of the release branches 202305, 202311, 202405 and 202411 (recorded unmodified in
// tests/data/sonic-gcu, with their commits; the validator code is the same on all four).
// Private to fabric/src/drivers.

#include <optional>
#include <string>
#include <string_view>

namespace rocelab::fabric::drivers {

// Whether rocelab holds the updater's rules of `release` ("202305").
[[nodiscard]] bool gcu_release_known(std::string_view release);

// The updater's ASIC name for a switch, as get_asic_name() of `release` computes it:
// asic_type (sonic_version.yml) cisco-8000 is "cisco-8000"; mellanox matches the HWSKU
// exactly (case-insensitive) against the release's spc1..spc4 lists only (a listed spc5
// HWSKU stays unknown, as the code never looks at spc5); broadcom matches a listed name
// contained in the HWSKU, families in the release's order; vs tries both. nullopt:
// "unknown", which the updater refuses every RDMA change of.
[[nodiscard]] std::optional<std::string> gcu_rdma_asic(std::string_view release, std::string_view asic_type,
                                                       const std::string& hwsku);

// Why the updater refuses a `replace` of `field` of `table` on `asic`: `field` as the
// validator cleans the path ("azure_lossless/green_min_threshold", "xoff", "dynamic_th").
// `branch_version` is the 8-digit part of the build version ("20230531"), empty when it
// has none (then, as in the updater, no version is compared). Empty result: allowed.
// A platform entry "" (td2 for xoff) refuses the field; an ASIC the field's platforms do
// not name makes the updater fail (a KeyError), which is a refusal too.
[[nodiscard]] std::string gcu_field_refusal(std::string_view table, std::string_view field, const std::string& asic,
                                            std::string_view branch_version);

}  // namespace rocelab::fabric::drivers

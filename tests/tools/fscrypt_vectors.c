/*
 * fscrypt_vectors.c --- check libfscrypt against published test vectors
 *
 * Usage: fscrypt_vectors [-v]
 *
 * Every primitive and mode that libfscrypt implements or wraps is run
 * on known answers: the Linux kernel's crypto/testmgr.h vectors (and the
 * reference implementations' vectors they were taken from) for
 * Adiantum, NHPoly1305, XChaCha12, HCTR2, XCTR; RFC 8452 for POLYVAL;
 * GB/T 32907 for SM4; IEEE 1619 for XTS; RFC 3962 for CBC-CTS (CS3);
 * the SipHash paper; the xfstests key identifier vector for HKDF; and
 * e2fsprogs' e4crypt for the passphrase hash.  Then every contents and
 * filenames mode, IV variant, padding and data unit size is driven
 * through the inode interface and compared with the same computation
 * assembled independently here from OpenSSL and the primitives.
 * Prints one line per failure and a summary; exits 1 on any failure.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include "fscrypt/fscrypt.h"

enum {
	V_ADIANTUM, V_NHPOLY1305, V_HCTR2, V_XCTR, V_XCHACHA12, V_POLYVAL,
	V_SM4, V_XTS_AES, V_XTS_SM4, V_CTS_AES
};

struct vec {
	const char *name;
	int alg;
	const char *key, *iv, *pt, *ct;
};

static const struct vec vecs[] = {
	/* testmgr.h adiantum_xchacha12_aes_tv_template, len 16 */
	{ "Adiantum-XChaCha12-AES 16", V_ADIANTUM,
		"9eebb2493c1cf5f46a99c2c4dfb1f4dd752057ea2c4fcdb2a53d7b491eabfd0f",
		"df63d4abd249f3d8338137607dfa7308d8496d80e82f6254eb0ea9395b457f8a",
		"67c9f23084418e43fbf3b33e79367fe8",
		"6d32861867860f3f967c9d280d53ec9f" },
	/* testmgr.h adiantum_xchacha12_aes_tv_template, len 31 */
	{ "Adiantum-XChaCha12-AES 31", V_ADIANTUM,
		"362b5797f85dcd995f1a5a441d920f27cc16d72b856399d3ba96a1dbd26068da",
		"ef5869b12c5e9a4724c1b169e112938f433d6d00db5ed8d9129afed9ff2daac4",
		"5ea8681985981223260accdb0a04b9df4db3487bb0e3c819435a4606942df2",
		"c7c6f1738fc4ff4a39be78be8d28c8894663e70c7d87e84ec9187bbe186050" },
	/* testmgr.h adiantum_xchacha12_aes_tv_template, len 128 */
	{ "Adiantum-XChaCha12-AES 128", V_ADIANTUM,
		"a52824341a3cd8f705918fee851f357f803dfc9b94f6fc9e190900a904314f11",
		"a1ba4995ff346db8cd875d5efdea85db8a7b5eb25d57dd62aca98c41429475b7",
		"69b4e88c37e86782f1ec5d04e5149113dff2871b69811d71709e9c3bde497011"
		"a0a3db0d544f6669d7db80a7709268ce81042cc6abaee56015e96fefaa8fa7a7"
		"638ff2f077f1a8eae1b71f9eab9e4b3f07875b6fcda8afb9fa700b52b8a8a79e"
		"075fa60eb39b791379c33e8d1c2c68c8511d3c7b7d79772a5665c5542328b003",
		"9e16abed4ba7425ac6fb4e76ffbe03a00fe3adbae4982b0e2148a0b865482748"
		"845454b29a947be64b29e9cf0591801a3af34196851d9f74515663fa7c288549"
		"f72ff9f21846f53380a33cceb25793f5aebda9f57b30c49366e0307716e4a031"
		"ba70bc6813f5b09ac1fc7efe55805c4874a6aaa3acdcc2f58dde34867860758d" },
	/* testmgr.h adiantum_xchacha12_aes_tv_template, len 1536 */
	{ "Adiantum-XChaCha12-AES 1536", V_ADIANTUM,
		"ebe5113a72eb10be70cfe3eac274a448290f8f3fcf4c282a4e1e3cc3279f1613",
		"843ea27c0672b2ad887665b41a29271245b68d0e4b8704fcb5cd1c4de806f1cb",
		"8eb6079b7ce4a4a2416c241dc0774ed94aa42cb6e455027fc4ecabc25c634092"
		"382462db6582107f21a5393a3f387ead6c7bc93f898fa808bd31573c7a456730"
		"a9275834bee3a4c3ffc29f43f004ba1eb6f3c4ce097a2e427dad97c9779a3a78"
		"6caf7c2a46b441861a20f25b1a60c9c4475d10a4d2156a194fd55137d506701a"
		"3e78f02eaab52abd83097ccb29acd79cbf80fd9dd4cf64caf8c9f1772ebb3926"
		"acd9bece247fbba282baeb5f65c5f1568a52024d45236debb0607bd86eb298d2"
		"af76f2339bf3bb95c050aac747f6b3f37716cb1495bf1d32450c75522ce8d731"
		"c087b0973030c55e50706eb04b4e381946ca386aca7dfe05c8807c146c24b542"
		"28044cff9820081090310378d8a1e6f952c2fc3ea768ceeb595debd8644ef88b"
		"2462cf173684c072604f3e47da723b0ece0ba99c51dca5b97173084e2231fd88"
		"29fc8d173a7ae5b90b9c6ddbcedbde81735a169d3c7288511016f3116e325f4c"
		"87ce882cd2aff5b7d822edc9ae687fc53062bec9e027a1b557743660b86b8cec"
		"14aded69c9d8a55b38075bf33e744890611723dd44bc9d120a3a63b2ab86b867"
		"85d6b25dde4ac1732a7c538ed67d0ee43babc53d327918b7d6504df08a37bbd3"
		"8dd808d77daa2452f790e3aad6497a47ec37ad748bc1b7fe4f701462228c63c2"
		"1c4e38c363b7bf53bd1faca694c581fae0eb81e9d91d323c8512ca6165d166d8"
		"e20ec3a3ff0dd3eedfcc3e01f59b455c33b5b08d361adff8a381bedb3d4bf6c6"
		"df7fb089bd393250bbb2e35cbb4b1898086651e74dfbfc4e22426f61db7f2788"
		"293f02a9c68330cc8bd5647b7c7616beb68b26b88316f26bd1dc206b425aef7a"
		"a960b81ad30d4ecb756bc58043387fad9c56d9c4f10174f016538d69bef25d92"
		"3438c884f91afc2616cbae7d382167744c40aa6b97e0b02ff53ef6e224c822a4"
		"a888278644755b2934084ba1fe0c26e5ac26f6210cfbde14fed7beee4893d699"
		"569ccf22ada25341fd58a168dcc4ef20a1eecf2b43b657d8fe018025dfd23544"
		"0d1515c3fc49bfd0bf2f958109a6b6d72103fe52b7a8324d751e4644bc2b6104"
		"1b1ceb39868fe949ce78a55e67c5e9ef43f8f135224361c127b509b2b8e15e26"
		"ccf36fb2b755309887fce7a8c89486a1d9a03c7416b32598bac6844a27a658fe"
		"e1680430c8db44524eb2a46ff763f2d663361704f806dbeb9917a51b6190a39f"
		"05ae3ee4dbc81c8e772788dfd3225ac59cd622f8c4d8929d16cc54253b6fdbc0"
		"78d8e3b30369d75df8080463619d76f9ad1dc4309f75896bfb62baaecb1b6ce5"
		"7eea586baece9b484b80d45e7153a72473caf53ebb5ed31c33e3ec5ba0329d25"
		"0e0c28293951c570ec608f77fc067a3319d57a6e94eaa3eb13a42e09d8816583"
		"03638bb5c989987369538eabf1d22f67bda6166ed08bc12593d2507c1fe111d0"
		"580d2f72e75edba2559ae00921ac61854b2095736326e3834b5b400314b04416"
		"bde00eb76656d730b3fd8ad3da6aa73d980911b70006245af74294a60eb16d48"
		"74b1a7e6920a159af5fa551a6cdd7108d0f78d0e7c674dc6e6de7888883c5e23"
		"46d225a4fba3263f2bfd9c20da72e1818fe6ae081d6715de86691dc61e6db75c"
		"dd43725a7da7d8d71e66c590f6517691b3e339817508fac50670691b2c2074e0"
		"53b00c9ddaa95bdd1c386c9e3bc47a82939ebb75fb194a55657a3cdacb665c13"
		"1797e8bdae24d976fb8c73debdb41be0b92ce8e01d3fa82c1e815b77e7df6d06"
		"7c9af02b5dfc86d5b1adbca873486167d6bac8e8e2b8ee4036223e61f6c816e4"
		"0e88ad715358e16c8f4f894b3e9c7fe9adc228c23a29f3eca92839bac286e106"
		"f38be3950c87b81b72358e8f6d18c81ca55d579d738abb9e210512d7e0211c16"
		"3a9585bcb0710b366c448def3bec3f8e24a9e3a76323ca096296790c810541f2"
		"072026e58e105403057bfe0ccc8c50e5ca334d487a03d5644909f25c5dfe2b30"
		"bf2914298b9b7c964707864d4e4df147d1102aa8d3158cf22ff43adfd0a7cb5a"
		"ad99394adf60bef9914ef594efc55632338678a3d64c297ce8ac06b5f5015c9f"
		"02c8e8bf5c1a7f4d28a5b9daa95ee74bf43de91d28aa1a8a76c86c19613c9e29"
		"cdbeffe01cb867b5a446f8b98aa2f67cef23730ce9720a0d9b40d8fb0c9caba8",
		"cb78879cc713c130dd2c7db297ab066947878a122b5d86d72ee67a0d585de701"
		"780effc7c5d294d6dd6b381fa4e33de7c58ab5be65112be12b8e84e8e0007fdd"
		"1515abbd2294f7ce996ffd0e9b16ebeb24c7bbc6e16c57ba84ab16f257d6429d"
		"56925b4418d4a21b1ea9dc7a1688c44f6d779a2e82a9c3eea4ca051b0edc4896"
		"d050211f46c7c77053cd1e4e5f2d4bb286e53ae61dec7b9d8fd641c6bb004fe6"
		"02470773506bcfb29e1c01c909ccc35227e663e05b55604d72d0da4beccb725d"
		"374af5b8d9e20810f3b9dc07c00210149fe68fc4c4e1397b47eaae7cdd27a84c"
		"6b0f4cf8ff164ecbec88330d15108266a73d2cb6bc2ee4ce4c2f4b460f6778a5"
		"ff6a7d0d5e6dabfb5999d81f30d433e87d11aee3bad03fa7a55e43daf30f3a5f"
		"bab047b20860f4ed35230ce94f81c4c5a835dc99523319d400018d5a10823978"
		"fc7224634a38c56ffeec2f260c3c1cf64d997a7759fe10a5a135bf2f15fa4e52"
		"e6d51c889075d5ccdb2ab1f0705489c7eb1d6e6145a35048cddb32ba7f6bafef"
		"50cb0d36f7293a100273ca8f3f5d8217919ad81515e3e14143ef85a6b0c73b0f"
		"f0a5aa6677705e70ce17846845392c25c6c15f7ee8fae43a47517b9d54849804"
		"5ff75f3c34e7a31deab76d05ab28e42cb17f08a85d07bffe3972448751c573e4"
		"9a5fdd46bc4eb139e478b8bfdc5b889bc13fd9d0b35adfaa536a916d2a09f00b"
		"5ee8b2a0b473071dc83384e6dae6add6ad91014e1442342ce5f99921561f6c2b"
		"4ce3d59e04dc9a16d154e9c2f7c0d5062fa1382a558823f8b0db8732c94eb00c"
		"c5057858a12e757568dceadd0c33165ee7dcfd4274beae603c374b27f52c5f55"
		"4a0b64fda201659c279f5e87d5958866098442ab00e258c39745f193e234373d"
		"fe938c17b9796506f758e51b3b4eda3617e356ec260f2efad1b92b3e7f1de34b"
		"67df435310baa3fb5d5ad8c4ab197e12aa83f1c0a1e0bf725fe86839ef1abeee"
		"6f477919edf2a14ae5fcb558ae6382cb160b94bb3e0249c43c33f1ec1b11719b"
		"5b80f16f881c0536a8d8ee44b518c31462ba98b9c02a7093b3d81169951d437b"
		"39c19105c4e31ec21e5de7debefdae994b8f831ef49bb02b666e62248de01b22"
		"59ebbd2a6b2e37179e1f66cb66b4fb2c36225d7356c1b027e0f01be4478bc6dc"
		"7c0c3d29cb3310fec3c31eff4c9b2786e2b0afb789ce6169e7003e92ea5f9ec1"
		"fa6b20e2412382eb07764c4c2a9633be89a9a8b99a7d271848237046f387a791"
		"58b874baedc6b2a14db6439ae1a241a535d3908ac74db7880be3749f84fcd973"
		"f2860cadeb5d70ac6507148e57f6dcb4c2027cd689e28a3e8e083c1237afe1a8"
		"04115cae5a2b60a0033c7aa23892bece09a25e0fc2b2b506c297979b092f04fe"
		"2ce7a3c442e9a340a552072c3b891aa528b19305980c2f3dc6f583ac241d289f"
		"32664d70b7e0abb875c5f3d27b263eec64e6f770e7f8108e67d2b3876940069a"
		"2f6a1afd620cee312ebe589777d109081f8d422934d5d8b51fd72118e3e72e4a"
		"42fcdb19e9eeb922ad5c07e9c807e5e995a20d3046e2655101a57485e2526e07"
		"c9f53309de7862a9302ad386e5462e60ff74b05fec76b7d15e4d61973c9c99c3"
		"41652147f9b106ec18f83fc738fa7b1462796a0b0cf52cb7abcf63496d1f46a8"
		"bc7d4253756bca38ac8be7a1a192196b0d75805b7d358670126be53ee585a0a4"
		"d6775e4d245784a9e5a4bf25fb36653b813961ec5e4a7e105819135c0f79eccf"
		"bb5f6921c3a75aff3bc7859b47bc3eadbf5460b65b3ffc5068837624b0c33f93"
		"0dce360a589dcce952bbd00b65e50f628216aad2ba5a4cd067b54e841c026ea3"
		"aa225496c8d99c581563f4981aa1d911642556b5038e29857588d1d2e4e62748"
		"139c2baafbd36e2ce6d4e48bd9f7011646f95c887a939e2da6eb012a72e47fb4"
		"780c5018d38e65a71bf9285d8970962fa1c29b34fc7c276393e6e3a49d17977e"
		"13799c4b2c23912c4fb11d4bb4616ee83235c3417a5060c83ed83f38fcc2a2e0"
		"3a21258fc222ed0431b87269af6c6dab2516958792c7463f47056cada0a61df0"
		"662e011ac3bee4f651eca39581e1ccabc171650ae653fbb85369ad8bab8ba7cd"
		"8f150125b11f9c3b9b47ad3838896b1c8a33dd8a0623060b7f70be7ea180bc7a" },
	/* testmgr.h nhpoly1305_tv_template, psize 16 */
	{ "NHPoly1305 16", V_NHPOLY1305,
		"292143cbcb1307debf48df8a7fa284de72239df5f007f24c203a93b9cd5dfecb"
		"992c2b58c6505f9456c37c0d023fb85e7bc06c513476c00ec622c89e92a021c9"
		"855c7cf8e26447c9e4a25793f8a269cd629899f4d77b14b1d805ff0415c9e16e"
		"9be6506b0b3f221f08de0c5b087ec62f6cedd6b215a4b3f9a746382aea69a5de"
		"02c396894d553bed3d3a8577bf97455c9e0269e21b68be96fb646f0ff6064067"
		"fa04e355fabea460ef216697e69d5c1f6237aa31dee49c2895e02286f44df307"
		"fd5f3a542c518071ba78695b65ab1f81ed3bff34a3fbbc73667d137fdf6ee2e2"
		"eb4f6cda7d3357d0d37c954f335821c7c0e56f4226c61f5e851b989aa21e5577"
		"23df815e795505fcfbdaeeba5abaf7777f0ed3e137fe8d2bd53ffbd0c03c0b3f"
		"cf3c14cffb46724c1f39e2da03716d23ef93cd39d937804d6561d12c03a94772"
		"4d1e0e16330f2117ec92ea6f3722a4d803339ed803699ae8b257af78990512ab"
		"489080f0129b20647a1d475fba3cf9c30a0d8da1f91b82133e0dec0a83c065e1"
		"e995ff97d6f2e4d586c01f292763d7deb70a0799042da389a243cff3e143ac4a"
		"0697d0054f87faf99bbf5270bdbc6cf3031360412809ecccb11aecd6fb6f2a89"
		"5d0b539c59c1842133514719319cd40a4d04ec509061bdbc7ec8d96c981d4541"
		"175e971cc5a8e8ea465853f717d5ad11c854f57a3390f519ba36b4fc52a5723d"
		"14bb55a7e9e312f71c30a28203bf53912e60419f5b6939f64dc8f8467a7fa498"
		"36ff06cbcae733f2c04af43c14445f6b75ef0236750814fd108ea558d0304649"
		"af3af8403d35db84112e976ab7877fadf1faa56360d85ebf417849cf77bb56bb"
		"7d01670522c88f41ba81d2ca2c38ac7606c11ac2ceac9067573e20125bd99758"
		"6505b704617ed83abf553b13e9345a3736cb9445c532b3a00c3e49c5d3eda7f0"
		"1c69cceacc83c91695724bf489d5b910f62d6015ea3c06669f82ad17ced2a448"
		"7c65d9f8024d9b4c89063a3485488986f924a95472db4495c7441c19114c04dc"
		"13b967c8c33a6a50fad1fbe188b6f1a3c53bdc38451626023bb88f8b587d2304"
		"506b819fae66ac6fcf2a9df1fd1d5707be58eb770ce3c21914741b511c4f41f3"
		"3289b3e7de62f65fc76a4a2a5b0f5f879c08b90288c829b79452fa52feaa5010"
		"ba48755e111be639d7822c87f11ea438723e51e7d83e5b7b311689bad6ad185e"
		"baf812b3f46c4730c03858b3108d585db4fb197e41c366b8d67284e11ac2714c"
		"0d4a217aaba2c03615c5e946d72917765e47367f7205a7cc3663f9477de6073c"
		"8b791d96618d90657cf5eb4e6e09596d62501b0fe0dc78f25b831aa11175fd18"
		"d7e28d651421cebeb587e30ada240a64a99f038d465d241a8a0c4201cab15f7c"
		"a5ac324ab80791186fb0713cc9b1a8f85f69a5a1ca9e7aaaace9c747417525c3"
		"73e20bdd6d5271bec5dcb4e701265377869085686b7b0353da52525168c8f3ec"
		"6cd5037aa30eb4025f1aabeeca67297bbd9659b38b327a929fd8252bdfc04cda",
		"",
		"bcda81a878791cbf7753ba4c305bb833",
		"04bf7f6ace72ea6a79dbb0c960f612cc" },
	/* testmgr.h nhpoly1305_tv_template, psize 19 */
	{ "NHPoly1305 19", V_NHPOLY1305,
		"2e771e2c6376343f71084f5ae33d7456c7984652e58aba0d724111151472508a"
		"d5ec6009dd71ccb95981652d9e5018f332f3f1e701821cad88a0210c4b805e62"
		"fc81ec52aae4a586c2e60311dc6609863c3bf0590fb3f74424b788c5fcc8779f"
		"8c44c41155ce7aa3e0a2b8bfb53d072c32b66cfcb4429595983281c4e7e2d96a"
		"87f4f41e747cb5cd5145683851db307411e0aaae198f1555dd474a35b90cb44e"
		"a9ce2ffa8fc18a5e5beca5813bb343062481f424e221facb49a8f8bd314a5b2d"
		"640a07f080c90d811458542bba2231baef66c9496969830df2f9809d3036fbe3"
		"c0722bcc5a812c5d3b5ef82bd3142873f91c70e6d8bbac30f9d9a0e2337c3334"
		"a56a776dd5aff4f3c7b30e833dcb01cc81c0f94aae3692f7697b6501c3c8b8ae"
		"16d830bbba6d786e0df07d84b787da287a18100b29ec29f3b07ba128bfbc2b2c"
		"922c16fb0239f9a6a21505a67210bc624a6eb8b55d59ae3c32d368d78e5acd1b"
		"eff6a75e1051154b2ce3ba704f2ca01c7b97d7b2a50517ccf73a296fd54bb824"
		"f4659512c086d16481df46550d220677d8ca8dc887c3fab9e19894e67bed6566"
		"0ec72515ee4ae67eea1b58ee96a0759aa3009e42c226208c3d221f943e744372"
		"e91da6a16ca7b803dfb97aafe9e93bfedf91c101a8ba5d29a5e0989b13e51311"
		"7c043ae8447e78fcd696a8bc7dc1893d7564a90e8633fb73f715bc2c9a3f29ce"
		"1c9d104e85e1774101e2bc88ec81efc26aed4ff7dfac107194ed71a401d4d6be"
		"fe3ec3926af22bb5ab1596b7882cc2e1b00422e73da9c97d2c7c21ff97866b0c"
		"2b5be0b648748f24ef8edd0f2a5fff33f48ec5eb9cd72a45f350f1c0918fc7f9"
		"97c13c9cf4ed8a23615b401a09ee23a87c7a96e131553d12041f217872f00fa5"
		"80587c2f37b567242fcef9f6869fb3340cfe0aaf27e65e0a214468e15d8425ae"
		"2c5a94669a3f0e5ad0602ad53a4e2f4087e9273eee92e107224352ed674913dd"
		"68d754c276727e75af24985ce822aa350f9a1c4c0b43689945ddbf82a56f0aef"
		"449085e7572322412eda2428657f96859f4b0d43b9a8bd84ad0b09cc2c4a0cec"
		"7158baf1fc494cca5c5db2770c99ae1cce70055b736b7c283beb213fa371e16a"
		"f487d0bf73aa0b0bed70b3d4a3ca763adbfad80895ecac59d07990c2337bcc28"
		"65b65f92c4ac2340d120441fd729ab467932c68f79e5aa2ca676703a9e463f8c"
		"1a893228615ccf931ede9e98be063023c48bda1cd16746939d41a28c0322bd55"
		"7e915113dccf5c1ecb5dfb14161a44562777fded7dbdd1497f0dc359486b3c02"
		"6bb5d083d58129e7e0c936238d413377ff5f54de4d3fd24eb64ddd85f89b207d"
		"39276863d38e6139fae1c30474275a347fec592dc56e5423f57b4bbe582bf281"
		"9363cc13d990bb6a41038d95ebbb5d06384c0ed6a95b84973e6472e996070f73"
		"6ec63b32beac1314d00a175fb99c3e34d9ecd68f89bf1ed3da80b229ff2896b3"
		"46505b158097ee1f6cd8e8e0bd09e7208c238ed9bb92fa82aa0fb5f8786011f0",
		"",
		"0bb2312dadfecef9ec5d3d645f3f7543055b97",
		"5f02ae656c132167779ec4435868de8f" },
	/* HCTR2 reference vectors (the source of testmgr.h aes_hctr2_tv_template), Random ( 1) */
	{ "HCTR2-AES256 16", V_HCTR2,
		"9eebb2493c1cf5f46a99c2c4dfb1f4dd752057ea2c4fcdb2a53d7b491eabfd0f",
		"df63d4abd249f3d8338137607dfa7308d8496d80e82f6254eb0ea9395b457f8a",
		"67c9f23084418e43fbf3b33e79367fe8",
		"2738784716d971352e7edd7e433cb840" },
	/* HCTR2 reference vectors (the source of testmgr.h aes_hctr2_tv_template), Random ( 1) */
	{ "HCTR2-AES256 17", V_HCTR2,
		"93fa7ee20e67c439e7ca4795689d5e5a7c2619abc6ca6a4c45a69642ae6cffe7",
		"ea8247953b22a13a6aca244c507e23cd0e50e541b66529d8302300d254a7d656",
		"db1f1fecad836e5d19a5f63bb4935a576f",
		"f1466e9db301f06bc2ac5788486d407268" },
	/* HCTR2 reference vectors (the source of testmgr.h aes_hctr2_tv_template), Random ( 1) */
	{ "HCTR2-AES256 31", V_HCTR2,
		"362b5797f85dcd995f1a5a441d920f27cc16d72b856399d3ba96a1dbd26068da",
		"ef5869b12c5e9a4724c1b169e112938f433d6d00db5ed8d9129afed9ff2daac4",
		"5ea8681985981223260accdb0a04b9df4db3487bb0e3c819435a4606942df2",
		"dbfdc803d0ecc1febd6437b88243624e7e54a3e224a727e8a4d5b36cb226b4" },
	/* HCTR2 reference vectors (the source of testmgr.h aes_hctr2_tv_template), Random ( 1) */
	{ "HCTR2-AES256 48", V_HCTR2,
		"0365036e4de6e84e8bbe22194831eed9a09121be6289de78d9b036a33cce43d5",
		"a9c34be70ffc6dbf5627211cfcd604105f43e23035296c1090f1bf61ed0f8a91",
		"07aa0226b498115e3341215151632c7200ab32a71cc83c9c250e8b9adf85ed2d"
		"f4f2bc55ca926d22fd223b424c0b74ec",
		"7bb1436dd8726cf6676a00c4f1f0f5a4fc6091ab460b15fcd7c12815a1fcf768"
		"8ecc276200645672a617d73f67801058" },
	/* HCTR2 reference vectors (the source of testmgr.h aes_hctr2_tv_template), Random ( 1) */
	{ "HCTR2-AES256 128", V_HCTR2,
		"a52824341a3cd8f705918fee851f357f803dfc9b94f6fc9e190900a904314f11",
		"a1ba4995ff346db8cd875d5efdea85db8a7b5eb25d57dd62aca98c41429475b7",
		"69b4e88c37e86782f1ec5d04e5149113dff2871b69811d71709e9c3bde497011"
		"a0a3db0d544f6669d7db80a7709268ce81042cc6abaee56015e96fefaa8fa7a7"
		"638ff2f077f1a8eae1b71f9eab9e4b3f07875b6fcda8afb9fa700b52b8a8a79e"
		"075fa60eb39b791379c33e8d1c2c68c8511d3c7b7d79772a5665c5542328b003",
		"ebf998863c409f168401f9060feb3ca94ca48e5dc38de5d3aea6e6ccd62d374f"
		"99c8a32146b869f2e31489d7b9f59e4e07936f788e6bea8ffb43b83e9b4c1d7e"
		"209ac587eeaff6f946c5188ae869e79652555f001e1adccc13a5eeff4b27cadc"
		"10a64876984394a3c7e2c9659b0814261d68fb150a33498484335a1b24463192" },
	/* HCTR2 reference vectors (the source of testmgr.h aes_hctr2_tv_template), Random ( 1) */
	{ "HCTR2-AES256 255", V_HCTR2,
		"364511a2985f967cc6b494310a6709326c6f6f00f017cbaca5a9479e2e852ffa",
		"2888aa9b593b1e9782e55c9e6d1411196e388fd5402bcaf97b4ce4a3d0d28a13",
		"95d2f7711bcaa586d94801932f7955297113150ee612bc4d8a31e3402ac65e0d"
		"68bb4a628dc74577d2b8c71df1d25d97cfac52e53277b6da3085cf2b98e9aa34"
		"62b5239eb7a6d4e0b458188c4dde4d01838924cafb11d482307a8135a0b4d4b6"
		"84ea47918c198625a6068d78e6ed87ebdaea737cbf66b872e30ab80ccb1a73f1"
		"a7ca0ade572bbd2beb8b243822d30e1f17a084983177fd346a4e3d844c0efbed"
		"c82a51fad873218adbb5fe1feec4e8655484dd966dfdd3317736526b804f9eb4"
		"a255bf6641494e87a70ccae7a5c5f66f2756e24822dd5f593cf19f83e52dfb71"
		"add1ae1b205c47b73bd314ce8142b10af049fac2e786bfcdb0959f8f794154",
		"f65751c425612dfad6d93f9a8151dd8e3de7aa2db1dac8a69daa3cab62f280c3"
		"2ce758721d44c5287fb4f9bc9cb2ab8efad14d72d979f5a0243e902531143845"
		"59c8f6e2c6f6c1a7b2f8a7a92b6f123ab081a4085759b1564c8f1855335fd66a"
		"c6a04bd66b643e9efd6616e2dbeb5fb350503ede8d727601beccc952092d8de7"
		"d6c366db3608d177c87346262429bf682d2a99435655e493afae4de7554ac045"
		"26eb3b12907cdcd1d56f0ad0a9d74b890b07d886ada1c4691f5e8bc49e914125"
		"569869783a9eae91d8d9fafbff812509fced2d87bc04629735e126c2461ccfd7"
		"14ed0209a5b2b6aa274e61b3716b4716b7e8d4af52eb6a6bdb4c65219e1c36" },
	/* XCTR reference vectors (testmgr.h aes_xctr_tv_template) */
	{ "XCTR-AES256 16", V_XCTR,
		"afd91414d5dbc9ce765c5abf43052924c41368cce837bdb94120f55348d0a2d6",
		"a7b400087910aef502bf85b2694cc604",
		"ac6aa80cb084bf4cae9420587e009389",
		"d5aae2e9864c954edeb615cbdc1f1338" },
	/* XCTR reference vectors (testmgr.h aes_xctr_tv_template) */
	{ "XCTR-AES256 31", V_XCTR,
		"775cc0739a6497912feee020c204592e97d2a770b3b0216b8fbfb851a8ea0f62",
		"318e1fcdfd23eb7f8a1f1b23532744e5",
		"cdff8c9b945a513f409356936639631fbfe6a4fabe799303f5667416fce4ce",
		"8bd3c3ce66f8664cadd6f50fd8995a75a13cab0b213657728829e9ea4a8de9" },
	/* XCTR reference vectors (testmgr.h aes_xctr_tv_template) */
	{ "XCTR-AES256 128", V_XCTR,
		"fbf5b73da69542bfd2946c740fbc5a28353c515884fb7d11161e00973708b716",
		"9b535740e6d9a72778d49bd2291d24a9",
		"8b02600a3eb71059c3acd52a7581f2db55ca658644fbfe9126bb45b246223e08"
		"a2bf46cb687d457ba16a3c6e25ebed317a8b47f9deec3d8709202efaba8b9bc5"
		"6c259c9d2ae8ab903f86ee611321d4dee10c95fc5c8a6e0a73cf0869444ede25"
		"afaa5604c4b360443b8b3deeae424bd29a6ca08e5206b2d15d38306d279b1ad8",
		"a37833789595970753a3a15b183227f70912537083b56a9f266d100de01ce62b"
		"7000dca160ef1beec5a55117aeccf2edc46007dfd57ae9903c9f965d72655def"
		"d09432c4859078a12e64f6ee8e743f202f123b3dd5398e5af98fce945d821866"
		"14af4cfee091c34a85cfe7e8f7cbf031887dc95b719d5fd2faeda624dabbb184" },
	/* Adiantum reference vectors, XChaCha12_32 Random ( 1), offsets [0, 1] */
	{ "XChaCha12", V_XCHACHA12,
		"8266851ec38621074f6f9e445e194d40147880fc21281e315d0b32dee24d8a1e",
		"c7cfe494e56c8f8cdf2c69a53e9e595393ca92cdadee0259",
		"0000000000000000000000000000000000000000000000000000000000000000"
		"0000000000000000000000000000000000000000000000000000000000000000"
		"0000000000000000000000000000000000000000000000000000000000000000"
		"0000000000000000000000000000000000000000000000000000000000000000",
		"e3a9ae210654bb5a0ae7a15c85b53e9abb0cf950e2f09789c5093562b0ffecdb"
		"2dac3aa06c90e6ac989ba24d78a96063991dbe8fe13426712cd74e28335c66a4"
		"8da7c32259c934a84bc591f82974c58e43dcc4f2c20484e6e5a747d0ebe466fc"
		"d58d174fa65f96e8c1a64a4019788eac31f5bd558747102fbccbb5afc2f20993" },
	/* GB/T 32907-2016, appendix A, example 1 */
	{ "SM4 GB/T 32907", V_SM4,
		"0123456789abcdeffedcba9876543210", "",
		"0123456789abcdeffedcba9876543210",
		"681edf34d206965e86b3e94f536e4246" },
	/*
	 * OpenSSL's SM4-XTS vector for IEEE 1619 XTS (evpciph_sm4.txt),
	 * its first two blocks: the rest is ciphertext stealing, which
	 * fscrypt never needs
	 */
	{ "SM4-XTS IEEE 1619", V_XTS_SM4,
		"2b7e151628aed2a6abf7158809cf4f3c"
		"000102030405060708090a0b0c0d0e0f",
		"f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
		"6bc1bee22e409f96e93d7e117393172a"
		"ae2d8a571e03ac9c9eb76fac45af8e51",
		"e9538251c71d7b80bbe4483fef497bd1"
		"b3db1a3e60408c575d63ff7db39f8326" },
	/* IEEE 1619-2007 annex B vectors 1 and 2 (testmgr.h aes_xts) */
	{ "XTS-AES-128 IEEE 1619 #1", V_XTS_AES,
		"00000000000000000000000000000000"
		"00000000000000000000000000000000",
		"00000000000000000000000000000000",
		"00000000000000000000000000000000"
		"00000000000000000000000000000000",
		"917cf69ebd68b2ec9b9fe9a3eadda692"
		"cd43d2f59598ed858c02c2652fbf922e" },
	{ "XTS-AES-128 IEEE 1619 #2", V_XTS_AES,
		"11111111111111111111111111111111"
		"22222222222222222222222222222222",
		"33333333330000000000000000000000",
		"44444444444444444444444444444444"
		"44444444444444444444444444444444",
		"c454185e6a16936e39334038acef838b"
		"fb186fff7480adc4289382ecd6d394f0" },
	/* RFC 3962 appendix B (testmgr.h cts_mode_tv_template) */
	{ "CBC-CS3-AES-128 RFC 3962 17", V_CTS_AES,
		"636869636b656e207465726979616b69",
		"00000000000000000000000000000000",
		"4920776f756c64206c696b652074686520",
		"c6353568f2bf8cb4d8a580362da7ff7f97" },
	{ "CBC-CS3-AES-128 RFC 3962 31", V_CTS_AES,
		"636869636b656e207465726979616b69",
		"00000000000000000000000000000000",
		"4920776f756c64206c696b65207468652047656e6572616c20476175277320",
		"fc00783e0efdb2c1d445d4c8eff7ed2297687268d6ecccc0c07b25e25ecfe5" },
	{ "CBC-CS3-AES-128 RFC 3962 32", V_CTS_AES,
		"636869636b656e207465726979616b69",
		"00000000000000000000000000000000",
		"4920776f756c64206c696b65207468652047656e6572616c2047617527732043",
		"39312523a78662d5be7fcbcc98ebf5a897687268d6ecccc0c07b25e25ecfe584" },
	/* RFC 8452 appendix A */
	{ "POLYVAL RFC 8452", V_POLYVAL,
		"25629347589242761d31f826ba4b757b", "",
		"4f4f95668c83dfb6401762bb2d01a262"
		"d1a24ddd2721d006bbe45f20d3c9f362",
		"f7a3b47b846119fae5b7866cf5e5b77e" },
	{ "POLYVAL RFC 8452 AES-GCM-SIV", V_POLYVAL,
		"310728d9911f1f3837b24316c3fab9a0", "",
		"6578616d706c65000000000000000000"
		"48656c6c6f20776f726c640000000000"
		"38000000000000005800000000000000",
		"ad7fcf0b5169851662672f3c5f95138f" },
};

static int verbose, failures, checks;

static void check(int ok, const char *what, const char *detail)
{
	checks++;
	if (ok) {
		if (verbose)
			printf("ok: %s%s%s\n", what, detail ? " " : "",
			       detail ? detail : "");
		return;
	}
	failures++;
	printf("FAIL: %s%s%s\n", what, detail ? " " : "",
	       detail ? detail : "");
}

static size_t unhex(const char *h, uint8_t *out, size_t max)
{
	size_t n = 0;
	unsigned int b;

	while (h[0] && h[1] && n < max && sscanf(h, "%2x", &b) == 1) {
		out[n++] = b;
		h += 2;
	}
	return n;
}

/* --- known answers ------------------------------------------------------ */

static void run_vector(const struct vec *v)
{
	static uint8_t key[2048], iv[64], pt[4096], ct[4096], out[4096];
	size_t klen = unhex(v->key, key, sizeof(key));
	size_t ivlen = unhex(v->iv, iv, sizeof(iv));
	size_t plen = unhex(v->pt, pt, sizeof(pt));
	size_t clen = unhex(v->ct, ct, sizeof(ct));
	int dec_ok = 1;
	errcode_t err = 0;

	(void) ivlen;
	memset(out, 0xaa, sizeof(out));
	switch (v->alg) {
	case V_ADIANTUM:
		err = fscrypt_adiantum_crypt(key, iv, pt, out, plen, 1);
		break;
	case V_HCTR2:
		err = fscrypt_hctr2_crypt(key, iv, pt, out, plen, 1);
		break;
	case V_XCTR:
		err = fscrypt_xctr_crypt(key, iv, pt, out, plen);
		break;
	case V_XCHACHA12:
		fscrypt_xchacha12(key, iv, pt, out, plen);
		break;
	case V_NHPOLY1305:
		fscrypt_nhpoly1305(key, pt, plen, out);
		break;
	case V_POLYVAL:
		fscrypt_polyval(key, pt, plen, out);
		break;
	case V_SM4:
		fscrypt_sm4_encrypt_block(key, pt, out);
		break;
	case V_XTS_AES:
	case V_XTS_SM4:
		err = fscrypt_xts_crypt(v->alg == V_XTS_SM4 ? FSCRYPT_BC_SM4 :
					FSCRYPT_BC_AES, key, klen, iv, pt,
					out, plen, 1);
		break;
	case V_CTS_AES:
		err = fscrypt_cts_crypt(FSCRYPT_BC_AES, key, klen, iv, pt,
					out, plen, 1);
		break;
	}
	check(!err && !memcmp(out, ct, clen), v->name, "(encrypt)");
	/* the length-preserving ciphers must also come back */
	switch (v->alg) {
	case V_ADIANTUM:
		err = fscrypt_adiantum_crypt(key, iv, ct, out, clen, 0);
		break;
	case V_HCTR2:
		err = fscrypt_hctr2_crypt(key, iv, ct, out, clen, 0);
		break;
	case V_XTS_AES:
	case V_XTS_SM4:
		err = fscrypt_xts_crypt(v->alg == V_XTS_SM4 ? FSCRYPT_BC_SM4 :
					FSCRYPT_BC_AES, key, klen, iv, ct,
					out, clen, 0);
		break;
	case V_CTS_AES:
		err = fscrypt_cts_crypt(FSCRYPT_BC_AES, key, klen, iv, ct,
					out, clen, 0);
		break;
	default:
		dec_ok = 0;
	}
	if (dec_ok)
		check(!err && !memcmp(out, pt, plen), v->name, "(decrypt)");
}

static void known_answers(void)
{
	static const uint8_t sm4_1m[16] = {
		0x59, 0x52, 0x98, 0xc7, 0xc6, 0xfd, 0x27, 0x1f,
		0x04, 0x02, 0xf8, 0x04, 0xc3, 0x3d, 0x3f, 0x66
	};
	uint8_t key[64], id[16], desc[8], blk[16], pk[64];
	uint64_t h;
	size_t i;

	for (i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++)
		run_vector(&vecs[i]);

	/* GB/T 32907 example 2: the same block encrypted 10^6 times */
	unhex("0123456789abcdeffedcba9876543210", key, 16);
	memcpy(blk, key, 16);
	for (i = 0; i < 1000000; i++)
		fscrypt_sm4_encrypt_block(key, blk, blk);
	check(!memcmp(blk, sm4_1m, 16), "SM4 GB/T 32907 (10^6 times)", NULL);

	/* xfstests common/encrypt: master key 01 02 .. 40 */
	for (i = 0; i < 64; i++)
		key[i] = i + 1;
	unhex("69b2f6edeee720cce0577937eb8a6751", blk, 16);
	check(!fscrypt_key_identifier(key, 64, id) && !memcmp(id, blk, 16),
	      "v2 key identifier (HKDF-SHA512)", NULL);
	/* SHA-512(SHA-512(01..40))[0:8], as e4crypt and fscrypt compute */
	unhex("433c48721c7f03c2", blk, 8);
	check(!fscrypt_key_descriptor(key, 64, desc) &&
	      !memcmp(desc, blk, 8), "v1 key descriptor", NULL);

	/* SipHash-2-4 paper, appendix A: key 00..0f, message 00..07 */
	for (i = 0; i < 16; i++)
		key[i] = i;
	check(!fscrypt_siphash_u64(key, 0x0706050403020100ULL, &h) &&
	      h == 0x93f5f5799a932462ULL, "SipHash-2-4", NULL);

	/*
	 * e2fsprogs 1.47.0: printf 'correct horse\n' | e4crypt add_key
	 * -S 0x000102030405060708090a0b0c0d0e0f prints the descriptor
	 * 49ae9c8ea34bc5c6 for the key it derives.
	 */
	unhex("49ae9c8ea34bc5c6", blk, 8);
	check(!fscrypt_e4crypt_passphrase_key((const uint8_t *)
					       "correct horse", 13, key, pk) &&
	      !fscrypt_key_descriptor(pk, 64, desc) &&
	      !memcmp(desc, blk, 8), "e4crypt passphrase key", NULL);
}

/* --- the generic modes against OpenSSL's ------------------------------ */

static int openssl_crypt(const char *name, const char *cts, const uint8_t *key,
			 const uint8_t *iv, const uint8_t *in, uint8_t *out,
			 size_t len, int enc)
{
	OSSL_PARAM params[2] = { OSSL_PARAM_END, OSSL_PARAM_END };
	EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, name, NULL);
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int outl = 0, ok;

	if (cts)
		params[0] = OSSL_PARAM_construct_utf8_string(
				OSSL_CIPHER_PARAM_CTS_MODE, (char *) cts, 0);
	ok = c && ctx && EVP_CipherInit_ex2(ctx, c, key, iv, enc, params) &&
	     EVP_CIPHER_CTX_set_padding(ctx, 0) &&
	     EVP_CipherUpdate(ctx, out, &outl, in, len) &&
	     (size_t) outl == len;
	EVP_CIPHER_CTX_free(ctx);
	EVP_CIPHER_free(c);
	return ok;
}

static void cross_checks(void)
{
	uint8_t key[64], iv[16], in[4096], a[4096], b[4096];
	char what[64];
	EVP_CIPHER *sm4;
	size_t len;
	int i;

	RAND_bytes(key, sizeof(key));
	RAND_bytes(iv, sizeof(iv));
	RAND_bytes(in, sizeof(in));
	check(!fscrypt_xts_crypt(FSCRYPT_BC_AES, key, 64, iv, in, a, 4096, 1) &&
	      openssl_crypt("AES-256-XTS", NULL, key, iv, in, b, 4096, 1) &&
	      !memcmp(a, b, 4096), "generic XTS = OpenSSL AES-256-XTS", NULL);
	for (i = 0; i < 2; i++) {
		for (len = 16; len <= 255; len += len < 80 ? 1 : 29) {
			snprintf(what, sizeof(what), "generic CS3 = OpenSSL "
				 "AES-%d-CBC-CTS CS3, %zu bytes",
				 i ? 128 : 256, len);
			check(!fscrypt_cts_crypt(FSCRYPT_BC_AES, key,
						 i ? 16 : 32, iv, in, a, len,
						 1) &&
			      openssl_crypt(i ? "AES-128-CBC-CTS" :
					    "AES-256-CBC-CTS", "CS3", key, iv,
					    in, b, len, 1) &&
			      !memcmp(a, b, len), what, NULL);
		}
	}
	/* SM4 is optional in OpenSSL; where it is there, agree with it */
	sm4 = EVP_CIPHER_fetch(NULL, "SM4-ECB", NULL);
	if (sm4) {
		EVP_CIPHER_free(sm4);
		for (i = 0; i < 256; i++)
			fscrypt_sm4_encrypt_block(key, in + 16 * i,
						  a + 16 * i);
		check(openssl_crypt("SM4-ECB", NULL, key, NULL, in, b, 4096,
				    1) && !memcmp(a, b, 4096),
		      "SM4 = OpenSSL SM4-ECB (256 blocks)", NULL);
		/* XTS and CTS over SM4 are the generic code above */
		check(!fscrypt_cts_crypt(FSCRYPT_BC_SM4, key, 16, iv, in, a,
					 64, 1) &&
		      openssl_crypt("SM4-CBC", NULL, key, iv, in, b, 64, 1) &&
		      !memcmp(a, b, 32) && !memcmp(a + 32, b + 48, 16) &&
		      !memcmp(a + 48, b + 32, 16),
		      "SM4-CTS = OpenSSL SM4-CBC with the last blocks swapped",
		      NULL);
	} else {
		printf("note: OpenSSL has no SM4 here; SM4 is checked "
		       "against GB/T 32907 only\n");
	}
}

/* --- every mode, IV variant and data unit size through an inode --------- */

struct combo {
	int version, contents, names, flags, log2_du;
};

static const struct combo combos[] = {
	{ 1, 1, 4, 0x00, 0 }, { 1, 1, 4, 0x01, 0 }, { 1, 1, 4, 0x02, 0 },
	{ 1, 1, 4, 0x03, 0 }, { 1, 5, 6, 0x00, 0 }, { 1, 9, 9, 0x00, 0 },
	{ 1, 9, 9, 0x04, 0 },
	{ 2, 1, 4, 0x00, 0 }, { 2, 1, 4, 0x02, 9 }, { 2, 1, 4, 0x03, 10 },
	{ 2, 1, 4, 0x01, 11 }, { 2, 1, 4, 0x02, 12 },
	{ 2, 5, 6, 0x00, 0 }, { 2, 5, 6, 0x03, 9 },
	{ 2, 9, 9, 0x00, 0 }, { 2, 9, 9, 0x04, 0 }, { 2, 9, 9, 0x06, 10 },
	{ 2, 1, 10, 0x00, 0 }, { 2, 1, 10, 0x03, 9 },
	{ 2, 7, 8, 0x00, 0 }, { 2, 7, 8, 0x01, 9 },
	{ 2, 1, 4, 0x08, 0 }, { 2, 1, 4, 0x0b, 0 }, { 2, 1, 10, 0x08, 0 },
	{ 2, 1, 4, 0x10, 0 }, { 2, 1, 4, 0x12, 0 }, { 2, 1, 10, 0x11, 0 },
};

#define BS		4096
#define INO		12345
static const uint8_t uuid[16] = {
	0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
};

static void make_context(const struct combo *c, const uint8_t *master,
			 size_t mlen, const uint8_t nonce[16], uint8_t *ctx,
			 size_t *len)
{
	memset(ctx, 0, 40);
	ctx[0] = c->version;
	ctx[1] = c->contents;
	ctx[2] = c->names;
	ctx[3] = c->flags;
	if (c->version == 1) {
		fscrypt_key_descriptor(master, mlen, ctx + 4);
		memcpy(ctx + 12, nonce, 16);
		*len = 28;
	} else {
		ctx[4] = c->log2_du;
		fscrypt_key_identifier(master, mlen, ctx + 8);
		memcpy(ctx + 24, nonce, 16);
		*len = 40;
	}
}

/* The key of @mode for this file, by the kernel's rules, from scratch */
static int reference_key(const struct combo *c, const uint8_t *master,
			 const uint8_t nonce[16], int mode, uint8_t *key)
{
	int size = fscrypt_mode_key_size(mode);
	uint8_t info[17];
	int outl;
	EVP_CIPHER_CTX *ctx;

	info[0] = mode;
	memcpy(info + 1, uuid, 16);
	if (c->version == 1) {
		if (c->flags & 0x04) {
			memcpy(key, master, size);
			return 1;
		}
		ctx = EVP_CIPHER_CTX_new();
		outl = EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), NULL, nonce,
					  NULL) &&
		       EVP_CIPHER_CTX_set_padding(ctx, 0) &&
		       EVP_EncryptUpdate(ctx, key, &outl, master, size);
		EVP_CIPHER_CTX_free(ctx);
		return outl;
	}
	if (c->flags & 0x04)
		return !fscrypt_hkdf_sha512(master, 64, 3, info, 1, key, size);
	if (c->flags & 0x08)
		return !fscrypt_hkdf_sha512(master, 64, 4, info, 17, key, size);
	if (c->flags & 0x10)
		return !fscrypt_hkdf_sha512(master, 64, 6, info, 17, key, size);
	return !fscrypt_hkdf_sha512(master, 64, 2, nonce, 16, key, size);
}

static void reference_iv(const struct combo *c, const uint8_t *master,
			 const uint8_t nonce[16], uint64_t index, uint8_t *iv)
{
	uint8_t hkey[16];
	uint64_t h = 0;
	uint32_t v;
	int i;

	memset(iv, 0, 32);
	if (c->flags & 0x10) {
		fscrypt_hkdf_sha512(master, 64, 7, NULL, 0, hkey, 16);
		fscrypt_siphash_u64(hkey, INO, &h);
		v = (uint32_t) h + (uint32_t) index;
		for (i = 0; i < 4; i++)
			iv[i] = v >> (8 * i);
		return;
	}
	for (i = 0; i < 8; i++)
		iv[i] = index >> (8 * i);
	if (c->flags & 0x08)
		for (i = 0; i < 4; i++)
			iv[4 + i] = (uint32_t) INO >> (8 * i);
	if (c->flags & 0x04)
		memcpy(iv + 8, nonce, 16);
}

/* One unit (or name) in @mode, from OpenSSL or the bare primitive */
static int reference_crypt(int mode, const uint8_t *key, const uint8_t *iv,
			   const uint8_t *in, uint8_t *out, size_t len)
{
	uint8_t salt[32], essiv[16];
	unsigned int n;

	switch (mode) {
	case 1:
		return openssl_crypt("AES-256-XTS", NULL, key, iv, in, out,
				     len, 1);
	case 4:
		return openssl_crypt("AES-256-CBC-CTS", "CS3", key, iv, in,
				     out, len, 1);
	case 5:
		/* ESSIV: the IV encrypted under SHA-256 of the key */
		return EVP_Digest(key, 16, salt, &n, EVP_sha256(), NULL) &&
		       openssl_crypt("AES-256-ECB", NULL, salt, NULL, iv,
				     essiv, 16, 1) &&
		       openssl_crypt("AES-128-CBC", NULL, key, essiv, in, out,
				     len, 1);
	case 6:
		return openssl_crypt("AES-128-CBC-CTS", "CS3", key, iv, in,
				     out, len, 1);
	case 7:
		return !fscrypt_xts_crypt(FSCRYPT_BC_SM4, key, 32, iv, in, out,
					  len, 1);
	case 8:
		return !fscrypt_cts_crypt(FSCRYPT_BC_SM4, key, 16, iv, in, out,
					  len, 1);
	case 9:
		return !fscrypt_adiantum_crypt(key, iv, in, out, len, 1);
	case 10:
		return !fscrypt_hctr2_crypt(key, iv, in, out, len, 1);
	}
	return 0;
}

static void one_combo(const struct combo *c)
{
	static const size_t name_lens[] = { 1, 3, 15, 16, 17, 31, 33, 100,
					    240, 253, 255 };
	struct fscrypt_keyring *kr;
	struct fscrypt_inode_params p;
	struct fscrypt_inode *file = NULL, *dir = NULL;
	uint8_t master[64], nonce[16], ctx[40], key[64], iv[32];
	uint8_t pt[2 * BS], ct[2 * BS], ref[2 * BS], name[256], enc[256];
	uint8_t dec[BS];
	size_t ctx_len, du, len, elen, dlen, pad, i;
	char what[128];
	errcode_t err;

	snprintf(what, sizeof(what), "v%d %s/%s flags 0x%02x du %d",
		 c->version, fscrypt_mode_name(c->contents),
		 fscrypt_mode_name(c->names), c->flags,
		 c->log2_du ? 1 << c->log2_du : BS);
	RAND_bytes(master, sizeof(master));
	RAND_bytes(nonce, sizeof(nonce));
	make_context(c, master, 64, nonce, ctx, &ctx_len);
	fscrypt_keyring_new(&kr);
	fscrypt_keyring_add_raw(kr, master, 64);
	memset(&p, 0, sizeof(p));
	p.ino = INO;
	p.block_size = BS;
	memcpy(p.uuid, uuid, 16);
	err = fscrypt_inode_open(kr, ctx, ctx_len, &p, &file);
	if (!err) {
		p.names = 1;
		err = fscrypt_inode_open(kr, ctx, ctx_len, &p, &dir);
	}
	check(!err, what, err ? error_message(err) : "(key setup)");
	if (err)
		goto out;

	/* contents: two units from unit 3 on */
	du = fscrypt_inode_data_unit(file);
	RAND_bytes(pt, 2 * du);
	memcpy(ct, pt, 2 * du);
	err = fscrypt_encrypt_data(file, 3 * du, ct, 2 * du);
	for (i = 0; i < 2 && !err; i++) {
		reference_key(c, master, nonce, c->contents, key);
		reference_iv(c, master, nonce, 3 + i, iv);
		if (!reference_crypt(c->contents, key, iv, pt + i * du,
				     ref + i * du, du))
			err = FSCRYPT_ET_CRYPTO;
	}
	check(!err && !memcmp(ct, ref, 2 * du), what, "(contents)");
	err = fscrypt_decrypt_data(file, 3 * du, ct, 2 * du);
	check(!err && !memcmp(ct, pt, 2 * du), what, "(contents back)");

	/* names: padded, encrypted with the directory's key, and back */
	pad = 4U << (c->flags & 3);
	reference_key(c, master, nonce, c->names, key);
	reference_iv(c, master, nonce, 0, iv);
	for (i = 0; i < sizeof(name_lens) / sizeof(name_lens[0]); i++) {
		len = name_lens[i];
		memset(name, 0, sizeof(name));
		RAND_bytes(name, len);
		name[0] = 'n';
		elen = len < 16 ? 16 : len;
		elen = (elen + pad - 1) / pad * pad;
		if (elen > 255)
			elen = 255;
		err = fscrypt_encrypt_name(dir, name, len, enc, &dlen);
		if (!err && dlen != elen)
			err = FSCRYPT_ET_BAD_NAME;
		if (!err && (!reference_crypt(c->names, key, iv, name, ref,
					      elen) || memcmp(enc, ref, elen)))
			err = FSCRYPT_ET_CRYPTO;
		if (!err)
			err = fscrypt_decrypt_name(dir, enc, elen, dec, &dlen);
		if (!err && (dlen != elen || memcmp(dec, name, elen)))
			err = FSCRYPT_ET_CRYPTO;
		if (err) {
			snprintf((char *) dec, sizeof(dec), "(name of %zu "
				 "bytes: %s)", len, error_message(err));
			check(0, what, (const char *) dec);
			break;
		}
	}
	if (i == sizeof(name_lens) / sizeof(name_lens[0]))
		check(1, what, "(names)");

	/* v2: the SipHash key for casefolded names, HKDF context 5 */
	if (c->version == 2) {
		uint8_t dk[16], want[16];

		check(!fscrypt_inode_dirhash_key(dir, dk) &&
		      !fscrypt_hkdf_sha512(master, 64, 5, nonce, 16, want,
					   16) && !memcmp(dk, want, 16),
		      what, "(dirhash key)");
	}

	/* a symlink target of 1000 bytes, with its own key */
	pt[0] = 't';
	err = fscrypt_encrypt_symlink(dir, (const uint8_t *) pt, 1000, ct,
				      sizeof(ct), &elen);
	if (!err)
		err = fscrypt_decrypt_symlink(dir, ct, elen, ref, sizeof(ref),
					      &dlen);
	/* the target ends at its first NUL */
	len = memchr(pt, 0, 1000) ? (size_t) ((uint8_t *) memchr(pt, 0, 1000)
					      - pt) : 1000;
	check(!err && dlen == len && !memcmp(ref, pt, len), what,
	      "(symlink)");
out:
	fscrypt_inode_close(file);
	fscrypt_inode_close(dir);
	fscrypt_keyring_free(kr);
}

static void refusals(void)
{
	static const struct {
		const char *name;
		size_t len;
		errcode_t want;
	} names[] = {
		{ "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16, FSCRYPT_ET_NAME_EMPTY },
		{ ".\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16, FSCRYPT_ET_NAME_DOT },
		{ "..\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16, FSCRYPT_ET_NAME_DOT },
		{ "a/b\0\0\0\0\0\0\0\0\0\0\0\0\0", 16, FSCRYPT_ET_NAME_SLASH },
		{ "a\0b\0\0\0\0\0\0\0\0\0\0\0\0\0", 16, FSCRYPT_ET_NAME_NUL },
		{ "...\0\0\0\0\0\0\0\0\0\0\0\0\0", 16, 0 },
		{ "abcdefghijklmnop", 16, 0 },
	};
	struct combo c = { 2, 1, 4, 0, 0 };
	struct fscrypt_keyring *kr;
	struct fscrypt_inode_params p;
	struct fscrypt_inode *fi = NULL;
	uint8_t master[64], other[64], nonce[16], ctx[40];
	size_t ctx_len, n, i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		check(fscrypt_check_name((const uint8_t *) names[i].name,
					 names[i].len, &n) == names[i].want,
		      "name check", names[i].want ?
		      error_message(names[i].want) : "(a good name)");

	RAND_bytes(master, 64);
	RAND_bytes(other, 64);
	RAND_bytes(nonce, 16);
	memset(&p, 0, sizeof(p));
	p.ino = INO;
	p.block_size = BS;
	fscrypt_keyring_new(&kr);
	fscrypt_keyring_add_raw(kr, other, 64);
	make_context(&c, master, 64, nonce, ctx, &ctx_len);
	check(fscrypt_inode_open(kr, ctx, ctx_len, &p, &fi) ==
	      FSCRYPT_ET_NO_KEY, "a wrong key is no key (v2)", NULL);
	c.version = 1;
	make_context(&c, master, 64, nonce, ctx, &ctx_len);
	check(fscrypt_inode_open(kr, ctx, ctx_len, &p, &fi) ==
	      FSCRYPT_ET_NO_KEY, "a wrong key is no key (v1)", NULL);
	fscrypt_keyring_add_raw(kr, master, 32);
	make_context(&c, master, 32, nonce, ctx, &ctx_len);
	check(fscrypt_inode_open(kr, ctx, ctx_len, &p, &fi) ==
	      FSCRYPT_ET_KEY_TOO_SHORT, "a 32-byte v1 key for AES-256-XTS",
	      NULL);
	ctx[3] = 0x20;
	check(fscrypt_inode_open(kr, ctx, ctx_len, &p, &fi) ==
	      FSCRYPT_ET_BAD_CONTEXT, "unknown policy flags", NULL);
	c = (struct combo) { 2, 1, 4, 0x10, 9 };
	fscrypt_keyring_add_raw(kr, master, 64);
	make_context(&c, master, 64, nonce, ctx, &ctx_len);
	check(fscrypt_inode_open(kr, ctx, ctx_len, &p, &fi) ==
	      FSCRYPT_ET_UNSUPPORTED, "IV_INO_LBLK_32 with 512-byte units",
	      NULL);
	c = (struct combo) { 2, 1, 10, 0x04, 0 };
	make_context(&c, master, 64, nonce, ctx, &ctx_len);
	check(fscrypt_inode_open(kr, ctx, ctx_len, &p, &fi) ==
	      FSCRYPT_ET_UNSUPPORTED, "DIRECT_KEY without Adiantum", NULL);
	/* Linux 6.12's supported_iv_ino_lblk_policy(): AES-256-XTS only */
	c = (struct combo) { 2, 9, 9, 0x08, 0 };
	make_context(&c, master, 64, nonce, ctx, &ctx_len);
	check(fscrypt_inode_open(kr, ctx, ctx_len, &p, &fi) ==
	      FSCRYPT_ET_UNSUPPORTED, "IV_INO_LBLK_64 with Adiantum", NULL);
	c = (struct combo) { 2, 1, 4, 0x08, 0 };
	make_context(&c, master, 64, nonce, ctx, &ctx_len);
	p.ino = 1ULL << 33;
	check(fscrypt_inode_open(kr, ctx, ctx_len, &p, &fi) ==
	      FSCRYPT_ET_NEED_INO, "IV_INO_LBLK_64 with a 33-bit inode",
	      NULL);
	check(fscrypt_keyring_add_raw(kr, master, 15) ==
	      FSCRYPT_ET_BAD_KEY_SIZE, "a 15-byte key", NULL);
	check(fscrypt_keyring_add_hex(kr, "0102x3") == FSCRYPT_ET_BAD_KEY_HEX,
	      "a key in bad hex", NULL);
	fscrypt_keyring_free(kr);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc > 1 && !strcmp(argv[1], "-v"))
		verbose = 1;
	add_error_table(&et_fscr_error_table);
	known_answers();
	cross_checks();
	for (i = 0; i < sizeof(combos) / sizeof(combos[0]); i++)
		one_combo(&combos[i]);
	refusals();
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
